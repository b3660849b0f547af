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
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
