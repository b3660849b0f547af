package termui

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/cordisgo/harness/internal/termsafe"
	"github.com/cordisgo/harness/plugins/mcpclient"
)

// progressBarWidth is the number of cells of the terminal progress bar.
const progressBarWidth = 24

// Progress shows the progress MCP servers report for tool calls and resource reads
// (mcpclient.ProgressEvent) on stderr. On a terminal (term set) it draws one line in place,
// a bar with the server's message, for the request that reported last, and clears it when
// that request ends; otherwise it writes one line per notification to w, which suits logs
// and CI. It is safe for concurrent use: servers report on their own goroutines.
type Progress struct {
	w    io.Writer
	term *Lines // nil when stderr is not a terminal
	prog string

	mu    sync.Mutex
	drawn string // the token whose bar is on screen; "" when none
}

// NewProgress returns the printer of the progress reports on w, a bar drawn in term when it
// is set (w is a terminal), and lines prefixed with prog ("harness: progress: …")
// otherwise.
func NewProgress(w io.Writer, term *Lines, prog string) *Progress {
	return &Progress{w: w, term: term, prog: prog}
}

// Report is the printer's mcpclient.ProgressEvent listener.
func (p *Progress) Report(ev mcpclient.Progress) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.term == nil {
		if !ev.Done {
			fmt.Fprintf(p.w, "%s: progress: %s\n", p.prog, progressText(ev))
		}
		return nil
	}
	if ev.Done {
		if p.drawn == ev.Token {
			p.term.Clear()
			p.drawn = ""
		}
		return nil
	}
	p.term.Draw(progressBar(ev) + " " + progressText(ev))
	p.drawn = ev.Token
	return nil
}

// progressText is "server/target 3/10 (30%) message, 12s".
func progressText(ev mcpclient.Progress) string {
	var b strings.Builder
	b.WriteString(ev.Server + "/" + ev.Target + " ")
	if ev.Total > 0 {
		fmt.Fprintf(&b, "%g/%g (%d%%)", ev.Progress, ev.Total, percent(ev))
	} else {
		fmt.Fprintf(&b, "%g", ev.Progress)
	}
	if ev.Message != "" {
		b.WriteString(" " + firstLine(ev.Message))
	}
	fmt.Fprintf(&b, ", %v", ev.Elapsed.Round(time.Second))
	return termsafe.Line(b.String()) // the server's names and message: shown safe
}

// progressBar is "[#####.......]" for a known total, "[ … ]" with a moving mark otherwise.
func progressBar(ev mcpclient.Progress) string {
	cells := []byte(strings.Repeat(".", progressBarWidth))
	if ev.Total > 0 {
		n := min(progressBarWidth, percent(ev)*progressBarWidth/100)
		for i := range n {
			cells[i] = '#'
		}
	} else {
		cells[int(ev.Progress)%progressBarWidth] = '#'
	}
	return "[" + string(cells) + "]"
}

func percent(ev mcpclient.Progress) int {
	if ev.Total <= 0 {
		return 0
	}
	return int(min(100, max(0, 100*ev.Progress/ev.Total)))
}

// firstLine keeps the first line of s.
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
