package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/lmittmann/tint"
	"go.uber.org/fx/fxevent"

	"github.com/cordisgo/harness/internal/termsafe"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/termui"
)

// Log formats accepted by --log-format.
const (
	logFormatText = "text"
	logFormatJSON = "json"
)

// newLogger builds the process logger writing to w: tint's readable lines
// for --log-format text (coloured only when w is a terminal and NO_COLOR is
// unset or empty), slog's JSON lines for --log-format json. level is a slog
// level name (debug, info, warn, error, or an offset such as warn+2); an
// empty level means def.
func newLogger(w io.Writer, format, level string, def slog.Level, env []string) (*slog.Logger, error) {
	lvl := def
	if level != "" {
		if err := lvl.UnmarshalText([]byte(level)); err != nil {
			return nil, usageErrorf("--log-level %q: expected debug, info, warn or error", level)
		}
	}
	var h slog.Handler
	switch strings.ToLower(format) {
	case "", logFormatText:
		h = tint.NewTextHandler(w, &tint.Options{
			Level:       lvl,
			TimeFormat:  time.TimeOnly,
			NoColor:     !colour(w, env),
			ReplaceAttr: safeAttr,
		})
	case logFormatJSON:
		h = slog.NewJSONHandler(w, &slog.HandlerOptions{Level: lvl})
	default:
		return nil, usageErrorf("--log-format %q: expected %s or %s", format, logFormatText, logFormatJSON)
	}
	if lvl > slog.LevelDebug {
		// The commands show every MCP client's status themselves (status lines, the
		// list's table): the clients' own log records of the same events would say it
		// twice. At debug level everything is logged.
		h = withoutStatusReports{h}
	}
	return slog.New(h), nil
}

// safeAttr shows the control characters of a text log line's message and string values
// (a server's log messages, stderr, errors) as visible escapes (internal/termsafe); tint
// writes its own colours around them. The JSON log keeps them (escaped by JSON).
func safeAttr(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindString {
		if s := a.Value.String(); termsafe.String(s) != s {
			a.Value = slog.StringValue(termsafe.String(s))
		}
	}
	return a
}

// withoutStatusReports is a handler that drops the log records in which an MCP client
// repeats a status report (those with the attribute mcpclient.StatusLogKey).
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

// colour reports whether logs written to w may use ANSI colours: w must be
// a terminal, NO_COLOR (https://no-color.org) unset or empty, and TERM not
// "dumb".
func colour(w io.Writer, env []string) bool {
	if v, ok := lookupEnv(env, "NO_COLOR"); ok && v != "" {
		return false
	}
	if v, _ := lookupEnv(env, "TERM"); v == "dumb" {
		return false
	}
	return termui.IsTerminal(w)
}

// lookupEnv finds name in an environment list of KEY=VALUE entries; the
// last entry wins, as in os/exec.
func lookupEnv(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// fxLogger routes fx's own event log to l at debug level: fx reports every
// provide, invoke and hook, which is noise at any other level, and every
// error it reports reaches the user through the command's own error.
func fxLogger(l *slog.Logger) fxevent.Logger {
	fl := &fxevent.SlogLogger{Logger: l.With("component", "fx")}
	fl.UseLogLevel(slog.LevelDebug)
	fl.UseErrorLevel(slog.LevelDebug)
	return fl
}

// errorf prints a message for the user to w, prefixed with the program
// name.
func errorf(w io.Writer, prog, format string, args ...any) {
	// The message may quote a server (its error, its stderr): shown safe.
	fmt.Fprintf(w, "%s: %s\n", prog, termsafe.String(fmt.Sprintf(format, args...)))
}
