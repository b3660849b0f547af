package app

import (
	"io"
	"strconv"

	"github.com/cordisgo/harness/termui"
)

// outputWidth is the width to wrap table cells to on w: COLUMNS from the environment if it
// is a positive number, else the terminal's width; 0 (do not wrap) when w is not a
// terminal, so that piped output keeps every line whole.
func (a *invocation) outputWidth(w io.Writer) int {
	if v, ok := lookupEnv(a.env, "COLUMNS"); ok {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return n
		}
	}
	return termui.Width(w)
}
