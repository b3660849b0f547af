package termui

import (
	"context"
	"io"
	"log/slog"

	"github.com/cordisgo/harness/internal/termsafe"
	"github.com/cordisgo/harness/plugins/mcpclient"
)

// SafeAttr shows the control characters of a text log line's message and string values
// (a server's log messages, stderr, errors) as visible escapes (internal/termsafe), for a
// text handler's ReplaceAttr (the CLI's tint lines, which write their own colours around
// them). A JSON log keeps them (escaped by JSON).
func SafeAttr(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindString {
		if s := a.Value.String(); termsafe.String(s) != s {
			a.Value = slog.StringValue(termsafe.String(s))
		}
	}
	return a
}

// WithoutStatusReports wraps h so that it drops the log records in which an MCP client
// repeats a status report (those with the attribute mcpclient.StatusLogKey): the commands
// show every client's status themselves (status lines, the list's table).
func WithoutStatusReports(h slog.Handler) slog.Handler { return withoutStatusReports{h} }

type withoutStatusReports struct{ slog.Handler }

func (h withoutStatusReports) Handle(cx context.Context, r slog.Record) error {
	report := false
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == mcpclient.StatusLogKey {
			report = a.Value.Kind() == slog.KindBool && a.Value.Bool()
			return false
		}
		return true
	})
	if report {
		return nil
	}
	return h.Handler.Handle(cx, r)
}

func (h withoutStatusReports) WithAttrs(attrs []slog.Attr) slog.Handler {
	return withoutStatusReports{h.Handler.WithAttrs(attrs)}
}

func (h withoutStatusReports) WithGroup(name string) slog.Handler {
	return withoutStatusReports{h.Handler.WithGroup(name)}
}

// Colour reports whether text written to w may use ANSI colours: w must be a terminal,
// NO_COLOR (https://no-color.org) unset or empty and TERM not "dumb", as getenv reads them
// (nil: both unset).
func Colour(w io.Writer, getenv func(string) string) bool {
	if getenv != nil && (getenv("NO_COLOR") != "" || getenv("TERM") == "dumb") {
		return false
	}
	return IsTerminal(w)
}
