package app

import (
	"strconv"

	"github.com/cordisgo/harness/hostview"
	"github.com/cordisgo/harness/termui"
)

// out is the invocation's output (hostview.Output): results on stdout, notes on stderr,
// tables wrapped to COLUMNS from the environment if it is a positive number, else to the
// terminal's width; not wrapped when stdout is not a terminal, so that piped output keeps
// every line whole.
func (a *invocation) out() hostview.Output {
	o := hostview.Output{Out: a.stdout, Notes: a.stderr, Prog: a.prog, Width: termui.Width(a.stdout)}
	if v, ok := lookupEnv(a.env, "COLUMNS"); ok {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			o.Width = n
		}
	}
	return o
}
