package termui_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cordisgo/harness/internal/ptytest"
	"github.com/cordisgo/harness/termui"
)

// TestPage: on a terminal of 40 rows, a text of 60 lines goes through the pager (here a
// sed that marks its lines, so that the screen shows it ran); one that fits, output that is
// not a terminal and the pager cat are left to the caller.
func TestPage(t *testing.T) {
	s := ptytest.Open(t)
	var long strings.Builder
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&long, "\x1b[32m+line %d\x1b[0m\n", i)
	}
	marker := termui.PageOptions{Term: s.TTY, Pager: "sed 's/^/PAGED /'", Env: []string{"PATH=/usr/bin:/bin"}}
	paged, err := termui.Page(t.Context(), marker, long.String())
	if err != nil || !paged {
		t.Fatalf("a long text: paged %v, %v", paged, err)
	}
	s.Expect("PAGED \x1b[32m+line 1\x1b[0m")
	s.Expect("PAGED \x1b[32m+line 60\x1b[0m")

	short := strings.Repeat("+a line\n", 38)
	for name, o := range map[string]termui.PageOptions{
		"a text that fits":  marker,
		"not a terminal":    {Term: &strings.Builder{}, Pager: marker.Pager},
		"the pager cat":     {Term: s.TTY, Env: []string{"PAGER=cat"}},
		"cat, a long text":  {Term: s.TTY, Pager: "cat"},
		"no terminal, long": {Term: &strings.Builder{}},
	} {
		text := long.String()
		if name == "a text that fits" {
			text = short
		}
		if paged, err := termui.Page(t.Context(), o, text); paged || err != nil {
			t.Errorf("%s: paged %v, %v", name, paged, err)
		}
	}
	// A pager that fails says so.
	if _, err := termui.Page(t.Context(), termui.PageOptions{Term: s.TTY, Pager: "exit 3"}, long.String()); err == nil || !strings.Contains(err.Error(), `pager "exit 3"`) {
		t.Errorf("a failing pager: %v", err)
	}
}
