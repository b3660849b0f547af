package termui

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// DefaultPager is the pager used when PAGER is unset: less, keeping colours (-R), leaving
// at once when the text fits after all (-F), and the text on the screen when it quits (-X).
const DefaultPager = "less -RFX"

// PageOptions configure [Page].
type PageOptions struct {
	// Term is the terminal the pager draws on (it reads its keys from the controlling
	// terminal, as pagers do). A *Lines is held while the pager runs.
	Term io.Writer
	// Pager is the command line, run by sh -c ("": $PAGER, else DefaultPager; "cat": none).
	Pager string
	// Env is the pager's environment (nil: the process's). LESS=FRX is added when it has
	// no LESS, as git does, so that less keeps colours.
	Env []string
}

// Page shows text through the pager when it has more lines than the terminal has rows
// (less two, for the question asked after it), and reports whether it did. Text that fits,
// output that is not a terminal and the pager "cat" are left to the caller to print. The
// text must be safe for a terminal already (internal/termsafe); colours are kept. Page
// returns when the person leaves the pager; the pager is killed when cx is done.
//
// Page is safe for concurrent use, though two pagers on one terminal make little sense.
func Page(cx context.Context, o PageOptions, text string) (bool, error) {
	rows := Height(o.Term)
	if rows <= 0 || strings.Count(strings.TrimSuffix(text, "\n"), "\n")+1 <= rows-2 {
		return false, nil
	}
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	pager := o.Pager
	if pager == "" {
		p, _ := lookupEnv(env, "PAGER")
		pager = strings.TrimSpace(p)
	}
	switch pager {
	case "":
		pager = DefaultPager
	case "cat":
		return false, nil
	}
	out := o.Term
	if t, ok := out.(*Lines); ok {
		defer t.Hold()()
		out = t.w
	}
	f, ok := out.(*os.File)
	if !ok {
		return false, nil
	}
	cmd := exec.CommandContext(cx, "sh", "-c", pager)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(text), f, f
	cmd.Env = env
	if _, ok := lookupEnv(env, "LESS"); !ok {
		cmd.Env = append(env[:len(env):len(env)], "LESS=FRX")
	}
	if err := cmd.Run(); err != nil {
		return true, fmt.Errorf("pager %q: %w", pager, err)
	}
	return true, nil
}

// lookupEnv returns the value of name in env (os.Environ's form; the last one wins) and
// whether it is there.
func lookupEnv(env []string, name string) (string, bool) {
	v, found := "", false
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v, found = val, true
		}
	}
	return v, found
}
