package termui

import (
	"io"
	"os"
)

// IsTerminal reports whether w (or the writer a *Lines draws on) is a character device,
// which is what a terminal is to the process.
func IsTerminal(w io.Writer) bool {
	if t, ok := w.(*Lines); ok {
		w = t.w
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
