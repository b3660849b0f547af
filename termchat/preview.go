package termchat

import (
	"context"
	"strings"

	"github.com/cordisgo/harness/internal/termsafe"
	"github.com/cordisgo/harness/permission"
)

// The colours of a diff on a terminal, as git shows them.
const (
	colourRemoved = "\x1b[31m"
	colourAdded   = "\x1b[32m"
	colourHunk    = "\x1b[36m"
	colourFile    = "\x1b[1m"
	colourOff     = "\x1b[0m"
)

// showPreview shows what a call would do before the person is asked about it: the command
// and where it runs, or the diff, coloured on a terminal. The server's text is made safe for
// the terminal first. A text longer than the screen goes through Options.Page (the pager),
// else it is printed.
func (ch *chat) showPreview(cx context.Context, p *permission.Preview) {
	if p == nil || strings.TrimSpace(p.Text) == "" {
		return
	}
	lines := strings.Split(termsafe.String(strings.TrimRight(p.Text, "\n")), "\n")
	for i, l := range lines {
		switch {
		case !ch.io.styled:
		case p.Kind == permission.PreviewDiff:
			lines[i] = diffLine(l)
		case p.Kind == permission.PreviewCommand && i > 0:
			lines[i] = ch.io.dim(l) // where and how it runs
		}
	}
	text := strings.Join(lines, "\n") + "\n"
	if ch.o.Page != nil {
		paged, err := ch.o.Page(cx, text)
		if err == nil && paged {
			return
		}
		if err != nil {
			ch.io.printf("%s\n", ch.io.dim(termsafe.String(err.Error())))
		}
	}
	ch.io.printf("%s", text)
}

// diffLine colours a line of a unified diff.
func diffLine(l string) string {
	switch {
	case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "):
		return colourFile + l + colourOff
	case strings.HasPrefix(l, "@@"):
		return colourHunk + l + colourOff
	case strings.HasPrefix(l, "+"):
		return colourAdded + l + colourOff
	case strings.HasPrefix(l, "-"):
		return colourRemoved + l + colourOff
	}
	return l
}
