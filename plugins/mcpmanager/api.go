package mcpmanager

import (
	"context"
	"fmt"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient"
)

// Register contributes a server for the lifetime of the calling plugin: the registration is
// an effect of c (the caller's context), so it ends when the returned disposer runs or c's
// scope unloads. The server runs while registered, as an instance mounted in the manager's
// scope; its tools go away with the registration: the disposer (idempotent) returns once the
// instance is disposed.
//
// name must match ^[A-Za-z0-9_-]{1,32}$ and be unique across configured (even disabled) and
// registered servers. cfg is an mcpclient configuration (start from [mcpclient.Config]'s
// Default); its ServerName must be empty or name. Its string fields may hold templates,
// resolved at mount time like a configured entry's; an entry without templates is
// validated here.
//
// It fails with [ErrBadRequest] for an invalid name or entry, [ErrConflict] when the name
// is taken (or blocked by an incomplete cleanup), [ErrUnavailable] when the manager is
// stopped, and with ctx.ErrInactive when c is unloading.
func (m *Manager) Register(c *ctx.Context, name string, cfg mcpclient.Config) (ctx.Disposer, error) {
	if !mcpclient.ValidServerName(name) {
		return nil, errorf(CodeBadRequest, "", "server name %q must match ^[A-Za-z0-9_-]{1,32}$", clip(name))
	}
	if cfg.ServerName != "" && cfg.ServerName != name {
		return nil, errorf(CodeBadRequest, name, "the entry's serverName %q differs from the registered name", cfg.ServerName)
	}
	e, err := newEntry(name, true, cfg)
	if err != nil {
		return nil, errorf(CodeBadRequest, name, "invalid entry: %v", err)
	}
	if e.static() {
		if err := e.cfg.Validate(); err != nil {
			return nil, errorf(CodeBadRequest, name, "invalid entry: %s", newScrubber(e.cfg, nil).Replace(err.Error()))
		}
	}
	owner := c.Scope().Name()
	return c.Effect("mcpManager.register:"+name, func(eff *ctx.Effect) error {
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return errClosed()
		}
		if m.settingsEntryLocked(name) != nil {
			m.mu.Unlock()
			return errorf(CodeConflict, name, "the name is configured in the settings file")
		}
		if r := m.registrationLocked(name); r != nil {
			m.mu.Unlock()
			return errorf(CodeConflict, name, "the name is already registered by %q", r.owner)
		}
		rec := m.recordLocked(name)
		if rec.blocked {
			m.mu.Unlock()
			return errCleanup(name)
		}
		m.regSeq++
		reg := &registration{e: e, owner: owner, seq: m.regSeq, gone: make(chan struct{})}
		m.regs = append(m.regs, reg)
		m.open[reg] = struct{}{}
		cancelProbesLocked(rec)
		rec.mountKey, rec.mountErr = "", ""
		m.kickLocked(rec)
		m.dirtyLocked()
		m.mu.Unlock()
		eff.Defer(func(dcx context.Context) error { return m.unregister(dcx, reg) })
		return nil
	})
}

// unregister removes reg and waits until its instance is disposed.
func (m *Manager) unregister(dcx context.Context, reg *registration) error {
	m.mu.Lock()
	if !reg.removed {
		reg.removed = true
		for i, r := range m.regs {
			if r == reg {
				m.regs = append(m.regs[:i:i], m.regs[i+1:]...)
				break
			}
		}
		if rec := m.records[reg.e.name]; rec != nil {
			cancelProbesLocked(rec)
			m.kickLocked(rec)
		}
		m.closeGoneLocked(reg)
		m.dirtyLocked()
	}
	gone := reg.gone
	m.mu.Unlock()
	select {
	case <-gone:
		return nil
	case <-dcx.Done():
		return fmt.Errorf("mcp manager: server %q: waiting for its instance to be disposed: %w", reg.e.name, dcx.Err())
	}
}

// Restart rebuilds the server called name from its current entry: it disposes the live
// instance, if any, and mounts a fresh one with a fresh reconnect budget, retrying an entry
// whose resolution failed. Restarts and reloads replace a server's instance one at a time.
// Restart returns once the new instance is mounted (not connected: watch the status) or
// ctx ends.
//
// It fails with [ErrNotFound] for an unknown name, [ErrConflict] for a disabled entry, and
// [ErrCleanupIncomplete] (code conflict) when the server's cleanup is incomplete — then no
// instance is started until the host restarts —, and [ErrUnavailable] when the manager is
// stopped.
func (m *Manager) Restart(ccx context.Context, name string) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return errClosed()
	}
	rec := m.records[name]
	var d desired
	ok := false
	if rec != nil {
		d, ok = m.desiredLocked(rec)
	}
	switch {
	case !ok:
		m.mu.Unlock()
		return errorf(CodeNotFound, name, "no configured or registered server has this name")
	case rec.blocked:
		m.mu.Unlock()
		return errCleanup(name)
	case !d.e.enabled:
		m.mu.Unlock()
		return errorf(CodeConflict, name, "the server is disabled in the settings file")
	case !m.active:
		m.mu.Unlock()
		return errorf(CodeUnavailable, name, "the manager is not active yet")
	}
	rec.restarts++
	rec.mountKey, rec.mountErr = "", ""
	cancelProbesLocked(rec)
	idle := m.kickLocked(rec)
	m.dirtyLocked()
	m.mu.Unlock()
	if idle == nil {
		return errClosed() // the manager is unloading
	}
	m.log.Info("mcp server restart requested", "server", name)

	select {
	case <-idle:
	case <-ccx.Done():
		return context.Cause(ccx)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if rec.blocked {
		return errCleanup(name)
	}
	if m.closed {
		return errClosed()
	}
	return nil
}
