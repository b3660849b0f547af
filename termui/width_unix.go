//go:build unix

package termui

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// Width returns the width of the terminal w writes to, or 0 when w is not a
// terminal.
func Width(w io.Writer) int {
	ws := winsize(w)
	if ws == nil {
		return 0
	}
	return int(ws.Col)
}

// Height returns the number of rows of the terminal w writes to, or 0 when w is not a
// terminal.
func Height(w io.Writer) int {
	ws := winsize(w)
	if ws == nil {
		return 0
	}
	return int(ws.Row)
}

func winsize(w io.Writer) *unix.Winsize {
	if t, ok := w.(*Lines); ok {
		w = t.w
	}
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return nil
	}
	return ws
}
