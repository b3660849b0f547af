package mcpbench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cordisgo/harness/ctx"
)

// ServerName is the local name of the i-th (0-based) of several servers: s01, s02, …
func ServerName(i int) string { return fmt.Sprintf("s%02d", i+1) }

// MountAll mounts n mcpclient rows for srv (named by ServerName) on h and waits until the
// tools of every one are registered. In parallel mode all rows are mounted at once and
// then waited for; otherwise each is mounted and waited for before the next.
func (h *Host) MountAll(cx context.Context, n int, parallel bool, srv Server) error {
	if !parallel {
		for i := range n {
			s, err := h.Mount(ServerName(i), srv)
			if err != nil {
				return err
			}
			if err := h.Ready(cx, s, ServerName(i)); err != nil {
				return err
			}
		}
		return nil
	}
	scopes := make([]*ctx.Scope, n)
	for i := range n {
		s, err := h.Mount(ServerName(i), srv)
		if err != nil {
			return err
		}
		scopes[i] = s
	}
	var errs []error
	for i, s := range scopes {
		errs = append(errs, h.Ready(cx, s, ServerName(i)))
	}
	return errors.Join(errs...)
}

// StartupRun is one startup measurement.
type StartupRun struct {
	// Wall is the time from the first mount until every server's tools were registered.
	Wall time.Duration
	// CPU is the processor time used meanwhile by this process (Self) and by the servers
	// (Children: counted once they are reaped, at the host's close).
	CPU CPU
}

// Startup builds a host (not timed), mounts n servers as MountAll does (timed), checks
// that the registry holds every server's echo tool, and closes the host (not timed).
func Startup(cx context.Context, logger *slog.Logger, n int, parallel bool, srv Server) (StartupRun, error) {
	h, err := NewHost(cx, logger)
	if err != nil {
		return StartupRun{}, err
	}
	before := ReadCPU()
	start := time.Now()
	err = h.MountAll(cx, n, parallel, srv)
	wall := time.Since(start)
	self := ReadCPU().Self
	if err == nil {
		if got := len(h.Registry.List(h.Root)); got < n {
			err = fmt.Errorf("mcpbench: %d tools registered, want at least %d", got, n)
		}
	}
	if cerr := h.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("closing the host: %w", cerr)
	}
	if err != nil {
		return StartupRun{}, err
	}
	cpu := ReadCPU().Sub(before)
	cpu.Self = self - before.Self
	return StartupRun{Wall: wall, CPU: cpu}, nil
}
