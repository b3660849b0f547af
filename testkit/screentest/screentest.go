// Package screentest is a test helper: a terminal screen that follows the few control
// sequences the harness's live lines write (carriage return, newline, erase line, cursor
// up), for tests of what a terminal shows. Only _test.go files may import it.
package screentest

import (
	"strings"
	"sync"
)

// Screen is a terminal for tests: it keeps what the lines written to it show, following
// the control sequences termui.Lines writes (\r, \n, erase line, cursor up), and everything
// written. Changed is signalled (without blocking) on every write. It is safe for
// concurrent use.
type Screen struct {
	mu   sync.Mutex
	rows []string // rows[len-1] is the cursor's row
	col  int
	raw  strings.Builder
	// Changed is signalled (without blocking) on every write.
	Changed chan struct{}
}

// New returns an empty screen.
func New() *Screen { return &Screen{rows: []string{""}, Changed: make(chan struct{}, 1)} }

func (s *Screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.raw.Write(p)
	for text := string(p); text != ""; {
		switch {
		case strings.HasPrefix(text, "\x1b[K"):
			r := []rune(s.rows[len(s.rows)-1])
			s.rows[len(s.rows)-1] = string(r[:min(s.col, len(r))])
			text = text[3:]
		case strings.HasPrefix(text, "\x1b[1A"):
			if len(s.rows) > 1 {
				s.rows = s.rows[:len(s.rows)-1] // what is below the cursor was erased before
			}
			text = text[4:]
		case text[0] == '\r':
			s.col = 0
			text = text[1:]
		case text[0] == '\n':
			s.rows = append(s.rows, "")
			s.col = 0
			text = text[1:]
		default:
			n := strings.IndexAny(text, "\r\n\x1b")
			if n < 0 {
				n = len(text)
			}
			r := []rune(s.rows[len(s.rows)-1])
			add := []rune(text[:n])
			r = append(r[:min(s.col, len(r))], add...)
			s.rows[len(s.rows)-1] = string(r)
			s.col += len(add)
			text = text[n:]
		}
	}
	select {
	case s.Changed <- struct{}{}:
	default:
	}
	return len(p), nil
}

// shows returns the Screen's rows, the cursor's row last.
func (s *Screen) Shows() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.rows, "\n")
}

// Written returns everything written to the Screen.
func (s *Screen) Written() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.raw.String()
}
