package app

import (
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/lmittmann/tint"
	"go.uber.org/fx/fxevent"

	"github.com/cordisgo/harness/termui"
)

// Log formats accepted by --log-format.
const (
	logFormatText = "text"
	logFormatJSON = "json"
)

// newLogger builds the process logger writing to w: tint's readable lines
// for --log-format text (coloured where termui.Colour allows, control characters
// shown safe, the clients' repeated status reports dropped above debug), slog's JSON lines for --log-format json. level is a slog
// level name (debug, info, warn, error, or an offset such as warn+2); an
// empty level means def. getenv reads NO_COLOR and TERM (termui.Colour).
func newLogger(w io.Writer, format, level string, def slog.Level, getenv func(string) string) (*slog.Logger, error) {
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
			NoColor:     !termui.Colour(w, getenv),
			ReplaceAttr: termui.SafeAttr,
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
		h = termui.WithoutStatusReports(h)
	}
	return slog.New(h), nil
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
