//go:build unix

package app

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// terminalColumns returns the width of the terminal w writes to, or 0 when w is not a
// terminal.
func terminalColumns(w io.Writer) int {
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
