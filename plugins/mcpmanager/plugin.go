package mcpmanager

import (
	"context"
	"encoding/json"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/filewatch"
	"github.com/cordisgo/harness/plugins/mcpclient"
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

// Remote parameters and results; plain values.
type (
	// NameParams are the parameters of mcpManager/restart.
	NameParams struct {
		Name string `json:"name"`
	}
	// ProbeParams are the parameters of mcpManager/probe.
	ProbeParams struct {
		Name    string       `json:"name"`
		Options ProbeOptions `json:"options"`
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

// exposeRemote marks list, watch, restart, probe, login and logout as remote methods
// mcpManager/*.
func (m *Manager) exposeRemote(c *ctx.Context) error {
	methods := []ctx.RemoteMethod{
		{Name: "mcpManager/list", Call: func(context.Context, json.RawMessage) (any, error) {
			if err := m.live(); err != nil {
				return nil, err
			}
			return m.listJSON()
		}},
		{Name: "mcpManager/watch", Stream: func(rc context.Context, _ json.RawMessage, send func(any) error) error {
			if err := m.live(); err != nil {
				return err
			}
			for snap := range m.Watch(rc) {
				if err := send(snap); err != nil {
					return err
				}
			}
			if rc.Err() != nil {
				return context.Cause(rc)
			}
			return errClosed()
		}},
		{Name: "mcpManager/restart", Call: func(rc context.Context, raw json.RawMessage) (any, error) {
			var p NameParams
			if err := decodeParams(raw, &p); err != nil {
				return nil, err
			}
			if err := m.Restart(rc, p.Name); err != nil {
				return nil, err
			}
			for _, v := range m.List() {
				if v.Name == p.Name && !v.Removed {
					return RestartResult{Server: v}, nil
				}
			}
			return nil, errorf(CodeNotFound, p.Name, "the server went away during the restart")
		}},
		{Name: "mcpManager/login", Stream: func(rc context.Context, raw json.RawMessage, send func(any) error) error {
			var p LoginParams
			if err := decodeParams(raw, &p); err != nil {
				return err
			}
			urls := make(chan string, 1)
			done := make(chan struct{})
			var ev LoginEvent
			var err error
			go func() {
				defer close(done)
				ev, err = m.Login(rc, p.Name, LoginOptions{NoBrowser: p.NoBrowser}, func(u string) {
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
		}},
		{Name: "mcpManager/logout", Call: func(rc context.Context, raw json.RawMessage) (any, error) {
			var p NameParams
			if err := decodeParams(raw, &p); err != nil {
				return nil, err
			}
			if err := m.Logout(rc, p.Name); err != nil {
				return nil, err
			}
			return LoginEvent{Server: p.Name, Done: true}, nil
		}},
		{Name: "mcpManager/probe", Call: func(rc context.Context, raw json.RawMessage) (any, error) {
			var p ProbeParams
			if err := decodeParams(raw, &p); err != nil {
				return nil, err
			}
			return m.Probe(rc, p.Name, p.Options)
		}},
	}
	methods = append(methods, ctx.RemoteMethod{Name: "mcpManager/setEnabled", Call: m.setEnabledMethod})
	for _, rm := range methods {
		if _, err := c.ExposeRemote(rm); err != nil {
			return err
		}
	}
	return nil
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

// decodeParams decodes remote parameters strictly ([ctx.DecodeInto]); a name is required.
func decodeParams(raw json.RawMessage, v any) error {
	if err := ctx.DecodeInto(raw, v); err != nil {
		return errorf(CodeBadRequest, "", "parameters: %v", err)
	}
	var name string
	switch p := v.(type) {
	case *NameParams:
		name = p.Name
	case *ProbeParams:
		name = p.Name
	case *LoginParams:
		name = p.Name
	case *EnabledParams:
		name = p.Name
	}
	if name == "" {
		return errorf(CodeBadRequest, "", `parameters: "name" is required`)
	}
	return nil
}
