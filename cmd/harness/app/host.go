package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"go.uber.org/fx"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/profiles"
	"github.com/cordisgo/harness/termui"
)

// errInterruptedStart is the error of a command interrupted (SIGINT, SIGTERM: its context
// cancelled) while its host was starting, whether the start was under way or had just ended.
var errInterruptedStart = errors.New("interrupted during start-up")

// withHost is the application shell of every command that needs the scope
// tree. It builds an fx app that supplies the invocation, provides the
// logger, the profile and the root scope, and ties the root's lifetime to
// the app's start and stop hooks (the host's mount as the start hook); starts it
// (bounded by --startup-timeout); runs fn; and stops it (bounded by
// --shutdown-timeout), whatever fn returned.
//
// fx is the shell only: it wires the handful of process-wide values once.
// Plugins never see it; the dynamic part of the application is the scope
// tree, which package host mounts and serves.
func (a *invocation) withHost(cx context.Context, fn func(context.Context, *host.Host) error) (err error) {
	var h *host.Host
	var root *ctx.Context
	app := fx.New(
		fx.WithLogger(fxLogger),
		fx.Supply(a),
		fx.Provide(
			func(a *invocation) *slog.Logger { return a.logger },
			func(a *invocation) (*profiles.Profile, error) { return a.loadProfile() },
			newRoot,
		),
		fx.Invoke(func(lc fx.Lifecycle, root *ctx.Context, p *profiles.Profile, a *invocation) error {
			if a.preflight != nil {
				rows := p.Rows
				if a.adjustRows != nil {
					rows = a.adjustRows(rows)
				}
				if err := a.preflight(rows); err != nil {
					return err
				}
			}
			if err := a.prepareRoot(root, p); err != nil {
				return err
			}
			h = host.New(root, p, a.hostOptions(p))
			lc.Append(fx.Hook{
				OnStart: func(cx context.Context) error { return a.start(cx, h) },
				OnStop:  func(cx context.Context) error { return root.Scope().Dispose(cx) },
			})
			return nil
		}),
		fx.Populate(&root),
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
		if derr := root.Scope().Dispose(scx); derr != nil {
			a.logger.Error("shutdown incomplete", "err", derr)
		}
		if cx.Err() != nil {
			// The interrupt ended the start: what fx reports of it (the start hook's
			// context cancelled) says nothing to a person.
			a.logger.Debug("start ended by the interrupt", "err", err)
			return failure(errInterruptedStart)
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
		return failure(errInterruptedStart)
	}
	// Exposed by every command: a long-running host serves them to other processes, and a
	// one-shot command calls them in process (remote.Local), the same way.
	if err := h.ExposeAPI(); err != nil {
		return failure(fmt.Errorf("exposing the host's methods: %w", err))
	}
	if !a.quietStartup {
		// Servers that did not connect are reported here, once: the command
		// goes on with the tools of the others.
		for _, st := range h.Board().NotReady() {
			a.out().Note("mcp server %s", host.StatusLine(st))
		}
	}
	return fn(cx, h)
}

// newRoot makes the root scope of the tree. Its disposal is the app's stop
// hook.
func newRoot(l *slog.Logger) *ctx.Context { return ctx.New(ctx.Options{Logger: l}) }

// hostOptions are the options of the invocation's host of p: its catalog, logger, live
// status display, catalog cache and row adjustments.
func (a *invocation) hostOptions(p *profiles.Profile) host.Options {
	dir, err := a.catalogDir()
	if err != nil {
		a.logger.Debug("no MCP catalog cache", "err", err)
	}
	return host.Options{
		Catalog:         a.catalog,
		Logger:          a.logger,
		Hosting:         a.hosting,
		CatalogDir:      dir,
		AdjustRows:      a.adjustRows,
		OnStatus:        a.liveStatus,
		ShutdownTimeout: a.shutdownTimeout,
		Self:            a.self,
		SelfEnv:         a.selfEnv,
	}
}

// prepareRoot equips the root scope with the invocation's own surfaces before its host is
// made: the progress display of the servers' long requests, the invocation's elicitation
// responder (as p's policy says), and serve's offer of what the gateway's downstream
// sessions answer. The clients then declare these from their first connection.
func (a *invocation) prepareRoot(root *ctx.Context, p *profiles.Profile) error {
	if _, err := mcpclient.ProgressEvent.On(root, termui.NewProgress(a.stderr, a.term, a.prog).Report); err != nil {
		return err
	}
	if a.gateway {
		if err := gateway.Offer(root); err != nil {
			return err
		}
	}
	return a.provideResponder(root, p)
}

// start is the app's start hook: it mounts the profile (host.Host.Mount) and waits, until
// cx is done, for the tree to be ready (host.Host.Ready), showing the servers that take
// long on a terminal (startupSpinner). Waiting that runs out is not an error: slow servers
// go on connecting in the background and the command works with what is ready, after a
// warning.
func (a *invocation) start(cx context.Context, h *host.Host) error {
	if err := h.Mount(); err != nil {
		return err
	}
	var spinner *termui.Spinner
	if a.term != nil && !a.quietStartup {
		// Which servers the command is waiting for; commands that show statuses themselves
		// (quietStartup) go without.
		spinner = termui.StartSpinner(h.Board(), a.term)
	}
	h.Ready(cx)
	if spinner != nil {
		spinner.Stop()
	}
	return nil
}
