package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"go.uber.org/fx"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/console"
	"github.com/cordisgo/harness/plugins/gateway"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/remote"
	"github.com/cordisgo/harness/profiles"
)

// host is a started application: the profile mounted in a live scope tree.
type host struct {
	root    *ctx.Context
	profile *profiles.Profile
	logger  *slog.Logger
	mounts  *mounts
	// rows are the rows mounted at start-up (the profile's, as mountedRows adjusts them).
	rows []profiles.Row
	// board collects every MCP client's status reports (mcpclient.StatusEvent),
	// whether or not the manager also receives them as the tree's status sink.
	board *statusBoard
	// gateway is the MCP gateway the host serves (run --gateway, serve), or nil.
	gateway atomic.Pointer[gateway.Gateway]
}

// withHost is the application shell of every command that needs the scope
// tree. It builds an fx app that supplies the invocation, provides the
// logger, the profile and the root scope, and ties the root's lifetime to
// the app's start and stop hooks; starts it (bounded by --startup-timeout);
// runs fn; and stops it (bounded by --shutdown-timeout), whatever fn
// returned.
//
// fx is the shell only: it wires the handful of process-wide values once.
// Plugins never see it; the dynamic part of the application is the scope
// tree.
func (a *invocation) withHost(cx context.Context, fn func(context.Context, *host) error) (err error) {
	if a.attached != nil {
		// Run by a host for another process (harness/exec): its tree is the profile.
		if a.flags.explicitProfile() {
			return usageErrorf("%s: the running host has its own profile: -p, --set, --stdio and --http are for this process (drop --host)", a.cmdPath)
		}
		return fn(cx, a.attached)
	}
	if ok, err := a.forward(cx); ok {
		return err
	}
	h := &host{mounts: &mounts{}, board: &statusBoard{live: a.liveStatus}}
	app := fx.New(
		fx.WithLogger(fxLogger),
		fx.Supply(a),
		fx.Provide(
			func(a *invocation) *slog.Logger { return a.logger },
			func(a *invocation) (*profiles.Profile, error) { return a.loadProfile() },
			newRoot,
		),
		fx.Invoke(func(lc fx.Lifecycle, root *ctx.Context, p *profiles.Profile, a *invocation) {
			lc.Append(fx.Hook{
				OnStart: func(cx context.Context) error { return a.start(cx, root, p, h) },
				OnStop:  func(cx context.Context) error { return root.Scope().Dispose(cx) },
			})
		}),
		fx.Populate(&h.root, &h.profile, &h.logger),
	)
	if err := app.Err(); err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			return ee // the profile's own error, without fx's wrapping
		}
		return failure(fmt.Errorf("building the application: %w", err))
	}

	startcx, cancel := context.WithTimeout(cx, a.startupTimeout)
	err = app.Start(startcx)
	cancel()
	stopCtx := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.WithoutCancel(cx), a.shutdownTimeout)
	}
	if err != nil {
		// fx has run the stop hooks of whatever had started; the root may
		// hold scopes mounted before the failure.
		scx, cancel := stopCtx()
		defer cancel()
		if derr := h.root.Scope().Dispose(scx); derr != nil {
			a.logger.Error("shutdown incomplete", "err", derr)
		}
		return failure(fmt.Errorf("starting: %w", err))
	}
	defer func() {
		scx, cancel := stopCtx()
		defer cancel()
		if serr := app.Stop(scx); serr != nil {
			a.logger.Error("shutdown incomplete", "err", serr)
			if err == nil {
				err = failure(fmt.Errorf("shutdown: %w", serr))
			}
		}
	}()
	if cx.Err() != nil {
		return failure(errors.New("interrupted during start-up"))
	}
	// Exposed by every command: a long-running host serves them to other processes, and a
	// one-shot command calls them in process (remote.Local), the same way.
	if err := a.exposeHostAPI(h); err != nil {
		return failure(fmt.Errorf("exposing the host's methods: %w", err))
	}
	if !a.quietStartup {
		// Servers that did not connect are reported here, once: the command
		// goes on with the tools of the others.
		for _, st := range h.board.notReady() {
			errorf(a.stderr, a.prog, "mcp server %s", statusLine(st))
		}
	}
	return fn(cx, h)
}

// newRoot makes the root scope of the tree. Its disposal is the app's stop
// hook.
func newRoot(l *slog.Logger) *ctx.Context { return ctx.New(ctx.Options{Logger: l}) }

// start is the app's start hook: it subscribes the status board to every
// client's reports, mounts the profile and waits, until c is done, for the
// tree to be ready (waitReady), showing the servers that take long on a terminal
// (startupSpinner). Waiting that runs out is not an error: slow
// servers go on connecting in the background and the command works with
// what is ready, after a warning. Rows that failed to load are logged.
func (a *invocation) start(cx context.Context, root *ctx.Context, p *profiles.Profile, h *host) error {
	began := time.Now()
	m := h.mounts
	if a.hosting {
		if err := a.endpointsFree(p.Rows); err != nil {
			return err
		}
	}
	if _, err := mcpclient.StatusEvent.On(root, h.board.report); err != nil {
		return err
	}
	if err := exposeClients(root, h.board); err != nil {
		return err
	}
	if _, err := mcpclient.ProgressEvent.On(root, newProgressPrinter(a.stderr, a.term, a.prog).report); err != nil {
		return err
	}
	if err := a.provideResponder(root, p); err != nil {
		return err
	}
	a.provideCatalog(root, p)
	if err := provideInstructions(root); err != nil {
		return err
	}
	rows := a.mountedRows(p.Rows)
	h.rows = rows
	if a.beforeMount != nil {
		if err := a.beforeMount(root); err != nil {
			return err
		}
	}
	if a.hosting && usesPlugin(rows, consoleUse) {
		// The page's elicitation responder, before the clients connect (they offer
		// elicitation when they see a responder then).
		if err := console.Prepare(root); err != nil {
			return err
		}
	}
	if err := mountRows(root, a.catalog, rows, m); err != nil {
		return err
	}
	var spinner *startupSpinner
	if a.term != nil && !a.quietStartup {
		// Which servers the command is waiting for; commands that show statuses themselves
		// (quietStartup) go without.
		spinner = startSpinner(h.board, a.term)
	}
	err := waitReady(cx, root)
	if spinner != nil {
		spinner.stop()
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			a.logger.Warn("start-up is taking long; continuing with the plugins that are ready",
				"waited", time.Since(began).Round(time.Millisecond))
		}
		return nil
	}
	for _, f := range m.failed() {
		a.logger.Warn("plugin failed to load", "row", f)
	}
	a.logger.Debug("profile mounted", "profile", p.Name, "took", time.Since(began).Round(time.Millisecond))
	return nil
}

// mountedRows returns the rows of a profile as this command mounts them: adjusted by the
// command (adjustRows), and without the remote API and the page's methods unless it hosts.
func (a *invocation) mountedRows(rows []profiles.Row) []profiles.Row {
	if a.adjustRows != nil {
		rows = a.adjustRows(rows)
	}
	if !a.hosting {
		// The remote API and the page's methods are the host's: a one-shot command never
		// publishes an endpoint.
		rows = withoutUse(withoutUse(rows, remoteUse), consoleUse)
	}
	return rows
}

// endpointsFree refuses, before anything is mounted, a host whose remote rows would
// publish an endpoint file that belongs to a running host (naming it).
func (a *invocation) endpointsFree(rows []profiles.Row) error {
	for _, r := range rows {
		if !r.Enabled {
			continue
		}
		if err := a.endpointsFree(r.Rows); err != nil {
			return err
		}
		if r.Use != remoteUse {
			continue
		}
		if v, err := a.catalog[remoteUse].DecodeConfig(r.Config); err == nil {
			if cfg, ok := v.(remote.Config); ok {
				if err := remote.InUse(cfg); err != nil {
					return fmt.Errorf("%s: %w", r.Path, err)
				}
			}
		}
	}
	return nil
}

// remoteUse is the catalog name of the remote API plugin; consoleUse the management
// page's console.
const (
	remoteUse  = "remote"
	consoleUse = "console"
)

// usesPlugin reports whether an enabled row of rows (nested rows included) mounts use.
func usesPlugin(rows []profiles.Row, use string) bool {
	for _, r := range rows {
		if r.Enabled && (r.Use == use || usesPlugin(r.Rows, use)) {
			return true
		}
	}
	return false
}

// withoutUse returns rows with every row (at any depth) that mounts use disabled.
func withoutUse(rows []profiles.Row, use string) []profiles.Row {
	out := make([]profiles.Row, len(rows))
	for i, r := range rows {
		if r.Use == use {
			if len(r.Rows) == 0 {
				r.Enabled = false
			} else {
				r.Use = "" // an agent scope: its nested rows still mount
			}
		}
		r.Rows = withoutUse(r.Rows, use)
		out[i] = r
	}
	return out
}
