package termui

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/plugins/mcpclient"
)

// StatusPrinter returns the live status display of a running host (harness run): when w
// is a terminal, one plain line per report on w ("demo: connected (8 tools)",
// host.StatusLine); otherwise a log line on l, at warn level for a server that is
// reconnecting or needs a login and error level for one that failed. The function is safe
// for concurrent use (clients report on their own goroutines): lines stay whole.
func StatusPrinter(w io.Writer, l *slog.Logger) func(mcpclient.Status) {
	tty := IsTerminal(w)
	var mu sync.Mutex
	return func(st mcpclient.Status) {
		line := host.StatusLine(st)
		if tty {
			mu.Lock()
			fmt.Fprintln(w, line)
			mu.Unlock()
			return
		}
		level := slog.LevelInfo
		switch st.Phase {
		case mcpclient.PhaseReconnecting, mcpclient.PhaseNeedsAuth:
			level = slog.LevelWarn
		case mcpclient.PhaseFailed:
			level = slog.LevelError
		}
		l.Log(context.Background(), level, line)
	}
}
