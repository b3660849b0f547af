package mcpmanager

import (
	"context"
	"encoding/json"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/filewatch"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/remote"
)

// Key is the mcpManager service: the running [Manager].
var Key = ctx.NewKey[*Manager]("mcpManager")

// Plugin runs the manager. Mount it once per tree (it provides [Key] and the
// [mcpclient.StatusSinkKey] status sink, one of each per realm). Its configuration is
// [Config].
//
// Loading reads the settings file and starts watching it; the servers are mounted, in
// parallel, as soon as the manager's scope is active. Unloading cancels probes, ends watch
// streams, disposes every instance in parallel and returns once all are gone.
var Plugin = ctx.Define(ctx.Meta{Name: "mcpmanager"}, apply)

func apply(c *ctx.Context, cfg Config) error {
	if err := cfg.resolvePaths(); err != nil {
		return err
	}
	var hk hooks
	if h, ok := c.Value(hooksKey{}).(*hooks); ok && h != nil {
		hk = *h
	}
	m := newManager(c, cfg, hk)

	// Every goroutine of the manager is an effect of its scope, and the unload undoes them
	// newest first. Registered first, finish runs last: it releases the registrations whose
	// disposers still wait.
	if _, err := c.Defer("mcpManager:finish", m.finish); err != nil {
		return err
	}
	// Instances and their workers nest under one effect, older than stop (registered last,
	// so it runs first): stop has the workers dispose every instance in parallel before
	// the effect itself goes.
	if _, err := c.Effect("mcpManager:servers", func(e *ctx.Effect) error {
		m.servers = e.Context()
		return nil
	}); err != nil {
		return err
	}
	var err error
	if m.pub, _, err = c.NewWorker("mcpManager:publish", m.publish); err != nil {
		return err
	}
	if m.emitter, _, err = c.NewWorker("mcpManager:emit", m.emit); err != nil {
		return err
	}
	if _, err := ctx.StatusChanged.On(c, m.onScopeStatus); err != nil {
		return err
	}
	var watches []*filewatch.Watch
	for _, path := range []string{m.cfg.settingsPath, m.cfg.projectPath} {
		if path != "" {
			watches = append(watches, filewatch.New(path, filewatch.Options{Debounce: m.cfg.debounce(), OnChange: m.reload, Logger: m.log}))
		}
	}
	if len(watches) > 0 {
		m.reload()
	}
	for i, sw := range watches {
		if _, err := c.Go("mcpManager:settings", sw.Run); err != nil {
			for _, w := range watches[i:] {
				w.Close()
			}
			return err
		}
	}
	if _, err := mcpclient.StatusSinkKey.Provide(c, sink{m}); err != nil {
		return err
	}
	if _, err := Key.Provide(c, m); err != nil {
		return err
	}
	if err := m.exposeRemote(c); err != nil {
		return err
	}
	if err := exposeProgress(c); err != nil {
		return err
	}
	if _, err := c.Go("mcpManager:activate", m.activate); err != nil {
		return err
	}
	_, err = c.Defer("mcpManager:stop", m.stop)
	return err
}

// The manager's remote methods, each declared once with its parameters and answer (the
// types below, and [Snapshot], [ProbeResult], [EnabledResult], [LoginEvent],
// [CallProgress]): the manager serves them and clients call them through these values.
var (
	// MethodList answers [ListResult]; no parameters.
	MethodList = remote.NewMethod[struct{}, ListResult]("mcpManager/list")
	// MethodWatch streams a [Snapshot] per change; no parameters.
	MethodWatch = remote.NewStreamMethod[struct{}, Snapshot]("mcpManager/watch")
	// MethodRestart answers the server's view once the new instance is mounted.
	MethodRestart = remote.NewMethod[NameParams, RestartResult]("mcpManager/restart")
	// MethodLogin streams a login's [LoginEvent]s.
	MethodLogin = remote.NewStreamMethod[LoginParams, LoginEvent]("mcpManager/login")
	// MethodLogout answers a [LoginEvent].
	MethodLogout = remote.NewMethod[NameParams, LoginEvent]("mcpManager/logout")
	// MethodProbe answers a [ProbeResult].
	MethodProbe = remote.NewMethod[ProbeParams, ProbeResult]("mcpManager/probe")
	// MethodSetEnabled answers an [EnabledResult].
	MethodSetEnabled = remote.NewMethod[EnabledParams, EnabledResult]("mcpManager/setEnabled")
	// MethodProgress streams the [CallProgress] of tool calls; no parameters.
	MethodProgress = remote.NewStreamMethod[struct{}, CallProgress]("mcpManager/progress")
)

// Remote parameters and results; plain values.
type (
	// NameParams are the parameters of mcpManager/restart and mcpManager/logout.
	NameParams struct {
		Name string `json:"name"`
	}
	// ProbeParams are the parameters of mcpManager/probe.
	ProbeParams struct {
		Name    string       `json:"name"`
		Options ProbeOptions `json:"options"`
	}
	// ListResult is the answer of mcpManager/list: the [Snapshot]. On the host it carries
	// the snapshot's encoding, made once per version (the page polls the list).
	ListResult struct {
		Snapshot
		encoded json.RawMessage
	}
	// RestartResult is the answer of mcpManager/restart: the server's view once the new
	// instance is mounted.
	RestartResult struct {
		Server View `json:"server"`
	}
	// LoginParams are mcpManager/login's parameters.
	LoginParams struct {
		Name string `json:"name"`
		// NoBrowser: see [LoginOptions].
		NoBrowser bool `json:"noBrowser,omitempty"`
	}
)

// exposeRemote marks list, watch, restart, probe, login, logout and setEnabled as remote
// methods mcpManager/*, typed: their parameters are decoded strictly once
// ([ctx.ExposeRemote]), and clients call them through the same declarations.
func (m *Manager) exposeRemote(c *ctx.Context) error {
	expose := []func() (ctx.Disposer, error){
		func() (ctx.Disposer, error) {
			return MethodList.Expose(c, func(context.Context, struct{}) (ListResult, error) {
				if err := m.live(); err != nil {
					return ListResult{}, err
				}
				return m.list()
			})
		},
		func() (ctx.Disposer, error) {
			return MethodWatch.Expose(c, func(rcx context.Context, _ struct{}, send func(Snapshot) error) error {
				if err := m.live(); err != nil {
					return err
				}
				for snap := range m.Watch(rcx) {
					if err := send(snap); err != nil {
						return err
					}
				}
				if rcx.Err() != nil {
					return context.Cause(rcx)
				}
				return errClosed()
			})
		},
		func() (ctx.Disposer, error) {
			return MethodRestart.Expose(c, func(rcx context.Context, p NameParams) (RestartResult, error) {
				if err := m.Restart(rcx, p.Name); err != nil {
					return RestartResult{}, err
				}
				for _, v := range m.List() {
					if v.Name == p.Name && !v.Removed {
						return RestartResult{Server: v}, nil
					}
				}
				return RestartResult{}, errorf(CodeNotFound, p.Name, "the server went away during the restart")
			})
		},
		func() (ctx.Disposer, error) {
			return MethodLogin.Expose(c, m.loginStream)
		},
		func() (ctx.Disposer, error) {
			return MethodLogout.Expose(c, func(rcx context.Context, p NameParams) (LoginEvent, error) {
				if err := m.Logout(rcx, p.Name); err != nil {
					return LoginEvent{}, err
				}
				return LoginEvent{Server: p.Name, Done: true}, nil
			})
		},
		func() (ctx.Disposer, error) {
			return MethodProbe.Expose(c, func(rcx context.Context, p ProbeParams) (ProbeResult, error) {
				return m.Probe(rcx, p.Name, p.Options)
			})
		},
		func() (ctx.Disposer, error) {
			return MethodSetEnabled.Expose(c, func(_ context.Context, p EnabledParams) (EnabledResult, error) {
				return m.SetEnabled(p.Name, p.Enabled)
			})
		},
	}
	for _, e := range expose {
		if _, err := e(); err != nil {
			return err
		}
	}
	return nil
}

// loginStream is mcpManager/login: the authorization URL as soon as it is known, then the
// outcome.
func (m *Manager) loginStream(rcx context.Context, p LoginParams, send func(LoginEvent) error) error {
	urls := make(chan string, 1)
	done := make(chan struct{})
	var ev LoginEvent
	var err error
	go func() {
		defer close(done)
		ev, err = m.Login(rcx, p.Name, LoginOptions{NoBrowser: p.NoBrowser}, func(u string) {
			select {
			case urls <- u:
			default:
			}
		})
	}()
	for {
		select {
		case u := <-urls:
			if serr := send(LoginEvent{Server: p.Name, URL: u}); serr != nil {
				<-done
				return serr
			}
		case <-done:
			if err != nil {
				return err
			}
			return send(ev)
		}
	}
}

// Validate requires a name.
func (p NameParams) Validate() error { return requireName(p.Name) }

// Validate requires a name.
func (p ProbeParams) Validate() error { return requireName(p.Name) }

// Validate requires a name.
func (p LoginParams) Validate() error { return requireName(p.Name) }

// Validate requires a name.
func (p EnabledParams) Validate() error { return requireName(p.Name) }

// requireName is the check of every method's parameters: a server name is required.
func requireName(name string) error {
	var p ctx.Problems
	p.Require("name", name, "the server's name")
	return p.Err()
}

// live fails once the manager is stopping.
func (m *Manager) live() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return errClosed()
	}
	return nil
}
