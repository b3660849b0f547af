package mcpclient

import (
	"context"
	"errors"
	"fmt"

	"github.com/cordisgo/harness/plugins/mcpclient/transport"
)

// dialStdio starts cfg.Command in its own process group ([transport.Process]) and connects
// over its stdin/stdout with the SDK's CommandTransport.
//
// The child is not bound to cx (exec.Command, not CommandContext): a
// watchdog kills the group only if cx ends while connecting, so a short
// startup timeout cannot kill a server that connected in time.
func dialStdio(cx context.Context, cfg Config, opts dialOptions) (*connection, error) {
	log := opts.log().With("server", cfg.ServerName)
	p, err := transport.NewProcess(transport.Spec{
		Command: cfg.Command, Args: cfg.Args, Dir: cfg.Cwd,
		Env: cfg.Env, Inherit: transport.Inherit{Mode: cfg.InheritEnv.Mode, Extra: cfg.InheritEnv.Extra},
		ParentEnv: opts.parentEnv, GOOS: opts.goos,
		StderrTailBytes: opts.stderrTailBytes, KillGrace: opts.killGrace,
	})
	if err != nil {
		return nil, connectError(cfg.ServerName, err, "")
	}
	cs, err := connectSession(cx, cfg, opts, opts.shim(p.Transport(opts.terminateDuration, opts.onTransportReady)))
	if !p.StopWatchdog() {
		// ctx ended while connecting and the watchdog killed the group.
		// Report ctx's error whichever symptom the SDK saw first (EOF or
		// ctx), and drop a session that completed at the last moment.
		switch {
		case err == nil:
			_ = cs.Close()
			err = context.Cause(cx)
		case !errors.Is(err, cx.Err()):
			err = fmt.Errorf("%w (%w)", context.Cause(cx), err)
		}
	}
	if err != nil {
		canceledcx, cancel := context.WithCancel(context.Background())
		cancel() // no graceful phase: go straight to the group signals
		cleanupErr := p.Shutdown(canceledcx, p.CloseConnection, log)
		cerr := connectError(cfg.ServerName, err, p.Stderr().Tail())
		if cleanupErr != nil {
			return nil, fmt.Errorf("%w; cleanup: %w", cerr, cleanupErr)
		}
		return nil, cerr
	}
	conn := newConnection(cfg, TransportStdio, cs, func(cx context.Context) error {
		if err := p.Shutdown(cx, cs.Close, log); err != nil {
			return fmt.Errorf("mcp server %q: close: %w", cfg.ServerName, err)
		}
		return nil
	})
	conn.stderr = p.Stderr()
	conn.pgid = p.Group()
	log.Debug("mcp server started", "pid", p.Group(), "command", cfg.Command)
	return conn, nil
}
