package termui

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/cordisgo/harness/internal/words"
)

// Lines is the block of live lines at the bottom of a terminal: the progress bar
// (Progress) and the start-up spinner (Spinner) draw there, each draw
// replacing the block drawn before in place, and clear removes it. The cursor stays at the
// end of the block's last line. Writes through it (the logger's, on a terminal) appear
// above the block: it is cleared, the text written and the block drawn again. Lines are cut
// to the terminal's width, since a wrapped line could not be redrawn in place. While text
// written through it has left the cursor in the middle of a line (a reasoning line being
// streamed, a prompt), the block is not drawn — drawing it would erase that line — and
// comes back once the line ends. It is safe for concurrent use.
type Lines struct {
	w io.Writer
	// columns returns the terminal's width, or 0 when unknown (lines are not cut).
	columns func() int

	mu      sync.Mutex
	lines   []string // on screen, unless held or partial
	held    int      // holds in force (see hold): the block is off the screen
	partial bool     // text written through Lines ended mid-line: the block waits
}

// shown reports whether the block is on the screen.
func (t *Lines) shown() bool { return t.held == 0 && !t.partial && len(t.lines) > 0 }

// note records where text written through Lines left the cursor.
func (t *Lines) note(p []byte) {
	if len(p) > 0 {
		t.partial = p[len(p)-1] != '\n'
	}
}

// Hold takes the block off the screen and keeps it off, draws only recorded, until the
// returned function is called (once or more; it is idempotent): something else — the
// elicitation form — owns the terminal meanwhile. The last hold's end draws the block again.
func (t *Lines) Hold() func() {
	t.mu.Lock()
	if t.shown() {
		fmt.Fprint(t.w, eraseLines(len(t.lines)))
	}
	t.held++
	t.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			t.mu.Lock()
			defer t.mu.Unlock()
			if t.held--; t.shown() {
				fmt.Fprint(t.w, strings.Join(t.lines, "\n"))
			}
		})
	}
}

// NewLines returns the live-line block of the terminal w.
func NewLines(w io.Writer) *Lines {
	return &Lines{w: w, columns: func() int { return Width(w) }}
}

// Draw replaces the block with lines (none clears it).
func (t *Lines) Draw(lines ...string) {
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
	if t.held == 0 && !t.partial {
		fmt.Fprint(t.w, eraseLines(max(1, len(t.lines)))+strings.Join(lines, "\n"))
	}
	t.lines = lines
}

// Clear removes the block.
func (t *Lines) Clear() { t.Draw() }

// Write writes p above the block.
func (t *Lines) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.shown() {
		if _, err := fmt.Fprint(t.w, eraseLines(len(t.lines))); err != nil {
			return 0, err
		}
	}
	n, err := t.w.Write(p)
	t.note(p)
	if err == nil && t.shown() {
		_, err = fmt.Fprint(t.w, strings.Join(t.lines, "\n"))
	}
	return n, err
}

func (t *Lines) width() int {
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
func cutColumns(s string, n int) string { return words.Clip(s, n) }
