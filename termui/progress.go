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

// finishedKept is how many finished requests the printer remembers, to ignore their late
// reports.
const finishedKept = 64

// Progress shows the progress MCP servers report for tool calls and resource reads
// (mcpclient.ProgressEvent) on stderr. On a terminal (term set) it draws one line in place,
// a bar with the server's message, for the request that reported last, and clears it when
// that request ends; otherwise it writes one line per notification to w, which suits logs
// and CI. A report of a request that has ended (its Done seen) is ignored: no bar comes
// back for a finished call. It is safe for concurrent use: servers report on their own
// goroutines.
type Progress struct {
	w    io.Writer
	term *Lines // nil when stderr is not a terminal
	prog string

	mu       sync.Mutex
	drawn    string              // the request whose bar is on screen (requestKey); "" when none
	finished map[string]struct{} // requests that ended, at most finishedKept
	order    []string            // finished's keys, oldest first
}

// requestKey names a request: its progress token within its server (clients number their
// tokens alike).
func requestKey(ev mcpclient.Progress) string { return ev.Server + "\x00" + ev.Token }

// finish remembers that the request key ended, forgetting the oldest beyond finishedKept.
func (p *Progress) finish(key string) {
	if p.finished == nil {
		p.finished = make(map[string]struct{}, finishedKept)
	}
	if _, ok := p.finished[key]; ok {
		return
	}
	if len(p.order) == finishedKept {
		delete(p.finished, p.order[0])
		p.order = p.order[1:]
	}
	p.finished[key] = struct{}{}
	p.order = append(p.order, key)
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
	key := requestKey(ev)
	if ev.Done {
		p.finish(key)
		if p.term != nil && p.drawn == key {
			p.term.Clear()
			p.drawn = ""
		}
		return nil
	}
	if _, ended := p.finished[key]; ended {
		return nil
	}
	if p.term == nil {
		fmt.Fprintf(p.w, "%s: progress: %s\n", p.prog, progressText(ev))
		return nil
	}
	p.term.Draw(progressBar(ev) + " " + progressText(ev))
	p.drawn = key
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
