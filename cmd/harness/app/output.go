package app

import (
	"fmt"
	"io"
	"strconv"

	"github.com/cordisgo/harness/hostview"
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

// printTable prints rows (the first is the header) as a table on stdout, the last column
// wrapped to the output's width (outputWidth).
func (a *invocation) printTable(rows [][]string) error {
	return hostview.Table(a.stdout, a.outputWidth(a.stdout), rows)
}

// writeColumns prints rows under header as aligned columns on stdout, or empty on stderr
// when there are none.
func writeColumns(a *invocation, empty string, header []string, rows [][]string) error {
	if len(rows) == 0 {
		fmt.Fprintln(a.stderr, empty)
		return nil
	}
	return hostview.Columns(a.stdout, header, rows)
}
