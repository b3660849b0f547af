package app

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cordisgo/harness/internal/termsafe"
	"github.com/cordisgo/harness/plugins/mcpclient"
)

// progressBarWidth is the number of cells of the terminal progress bar.
const progressBarWidth = 24

// termLines is the block of live lines at the bottom of a terminal: the progress bar
// (progressPrinter) and the start-up spinner (startupSpinner) draw there, each draw
// replacing the block drawn before in place, and clear removes it. The cursor stays at the
// end of the block's last line. Writes through it (the logger's, on a terminal) appear
// above the block: it is cleared, the text written and the block drawn again. Lines are cut
// to the terminal's width, since a wrapped line could not be redrawn in place. It is safe
// for concurrent use.
type termLines struct {
	w io.Writer
	// columns returns the terminal's width, or 0 when unknown (lines are not cut).
	columns func() int

	mu    sync.Mutex
	lines []string // on screen, unless held
	held  int      // holds in force (see hold): the block is off the screen
}

// hold takes the block off the screen and keeps it off, draws only recorded, until the
// returned function is called (once or more; it is idempotent): something else — the
// elicitation form — owns the terminal meanwhile. The last hold's end draws the block again.
func (t *termLines) hold() func() {
	t.mu.Lock()
	if t.held == 0 && len(t.lines) > 0 {
		fmt.Fprint(t.w, eraseLines(len(t.lines)))
	}
	t.held++
	t.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			t.mu.Lock()
			defer t.mu.Unlock()
			if t.held--; t.held == 0 && len(t.lines) > 0 {
				fmt.Fprint(t.w, strings.Join(t.lines, "\n"))
			}
		})
	}
}

// newTermLines returns the live-line block of the terminal w.
func newTermLines(w io.Writer) *termLines {
	return &termLines{w: w, columns: func() int { return terminalColumns(w) }}
}

// draw replaces the block with lines (none clears it).
func (t *termLines) draw(lines ...string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(lines) == 0 && len(t.lines) == 0 {
		return
	}
	lines = slices.Clone(lines)
	if n := t.width(); n > 0 {
		for i, l := range lines {
			lines[i] = cutColumns(l, n-1)
		}
	}
	if t.held == 0 {
		fmt.Fprint(t.w, eraseLines(max(1, len(t.lines)))+strings.Join(lines, "\n"))
	}
	t.lines = lines
}

// clear removes the block.
func (t *termLines) clear() { t.draw() }

// Write writes p above the block.
func (t *termLines) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 || t.held > 0 {
		return t.w.Write(p)
	}
	if _, err := fmt.Fprint(t.w, eraseLines(len(t.lines))); err != nil {
		return 0, err
	}
	n, err := t.w.Write(p)
	if err == nil {
		_, err = fmt.Fprint(t.w, strings.Join(t.lines, "\n"))
	}
	return n, err
}

func (t *termLines) width() int {
	if t.columns == nil {
		return 0
	}
	return t.columns()
}

// eraseLines clears the n lines ending at the cursor's line and leaves the cursor at the
// start of the first.
func eraseLines(n int) string {
	return "\r\x1b[K" + strings.Repeat("\x1b[1A\x1b[K", n-1)
}

// cutColumns cuts s to n runes (a rune taken for a column), ending with "…" when cut.
func cutColumns(s string, n int) string {
	r := []rune(s)
	if n < 1 || len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// progressPrinter shows the progress MCP servers report for tool calls and resource reads
// (mcpclient.ProgressEvent) on stderr. On a terminal (term set) it draws one line in place,
// a bar with the server's message, for the request that reported last, and clears it when
// that request ends; otherwise it writes one line per notification to w, which suits logs
// and CI. It is safe for concurrent use: servers report on their own goroutines.
type progressPrinter struct {
	w    io.Writer
	term *termLines // nil when stderr is not a terminal
	prog string

	mu    sync.Mutex
	drawn string // the token whose bar is on screen; "" when none
}

func newProgressPrinter(w io.Writer, term *termLines, prog string) *progressPrinter {
	return &progressPrinter{w: w, term: term, prog: prog}
}

// report is the printer's mcpclient.ProgressEvent listener.
func (p *progressPrinter) report(ev mcpclient.Progress) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.term == nil {
		if !ev.Done {
			errorf(p.w, p.prog, "progress: %s", progressText(ev))
		}
		return nil
	}
	if ev.Done {
		if p.drawn == ev.Token {
			p.term.clear()
			p.drawn = ""
		}
		return nil
	}
	p.term.draw(progressBar(ev) + " " + progressText(ev))
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
