package ctx

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"
)

// State is the lifecycle state of a scope.
type State uint8

// Scope states. A scope starts Pending, loads when its injected services are available, and
// ends Disposed.
const (
	Pending   State = iota // waiting for injected services (or not yet started)
	Loading                // the apply function is running
	Active                 // loaded; services it provides are visible
	Failed                 // the last load failed; retried when a dependency changes, on Update or Restart
	Unloading              // effects are being disposed
	Disposed               // terminal
)

var stateNames = [...]string{"pending", "loading", "active", "failed", "unloading", "disposed"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// Scope is one mounted plugin instance (or the root). It moves through the states
// pending → loading → active | failed → unloading → disposed, one transition at a time,
// each reported by the [StatusChanged] event.
//
// A Scope is safe for concurrent use. Blocking methods take a [context.Context] that bounds
// the wait, not the work.
type Scope struct {
	r          *root
	id         uint64
	parent     *Scope
	def        PluginDef
	name       string
	logger     *slog.Logger
	mountCtx   *Context
	deps       []serviceKey
	done       chan struct{}           // closed once Disposed
	rootCancel context.CancelCauseFunc // root only

	// guarded by r.mu
	state      State
	err        error
	raw        any
	cfg        any
	gen        uint64
	disposing  bool
	eng        engine // the transitions: running while the scope has one in flight
	cur        *activation
	loaded     epoch
	failed     epoch
	entry      *node // the parent's effect that disposes this scope
	provided   []*impl
	disposeErr error
	deadline   time.Time // for the next unload's disposers; zero: none (see noteDeadlineLocked)
}

// epoch identifies what a scope is (or would be) loaded against: its restart generation and
// the provider scope of each injected service.
type epoch struct {
	ok  bool
	gen uint64
	ids []uint64
}

func (e epoch) equal(o epoch) bool {
	return e.ok == o.ok && e.gen == o.gen && slices.Equal(e.ids, o.ids)
}

// ID returns the scope's number: 0 for the root, then 1, 2, … in mount order within a tree.
func (s *Scope) ID() uint64 { return s.id }

// Name returns the plugin's name, or the nearest named ancestor's, or "root".
func (s *Scope) Name() string { return s.name }

// Parent returns the parent scope, or nil for the root.
func (s *Scope) Parent() *Scope { return s.parent }

// Def returns the plugin definition mounted in this scope (nil for the root).
func (s *Scope) Def() PluginDef { return s.def }

// State returns the current state.
func (s *Scope) State() State {
	s.r.mu.RLock()
	defer s.r.mu.RUnlock()
	return s.state
}

// Err returns the error of the last failed load, or nil.
func (s *Scope) Err() error {
	s.r.mu.RLock()
	defer s.r.mu.RUnlock()
	return s.err
}

// Config returns the decoded configuration of the current (or last) load, or nil.
func (s *Scope) Config() any {
	s.r.mu.RLock()
	defer s.r.mu.RUnlock()
	return s.cfg
}

// Context returns the context of the current activation, or nil when the scope is not
// loaded.
func (s *Scope) Context() *Context {
	s.r.mu.RLock()
	defer s.r.mu.RUnlock()
	if s.cur == nil {
		return nil
	}
	return s.cur.ctx
}

// Done returns a channel closed once the scope is disposed.
func (s *Scope) Done() <-chan struct{} { return s.done }

// Effects lists the live effects of the current activation, oldest first, as a tree.
func (s *Scope) Effects() []EffectInfo {
	s.r.mu.RLock()
	defer s.r.mu.RUnlock()
	if s.cur == nil {
		return nil
	}
	return s.cur.top.info().Children
}

// Within reports whether s is anc or one of its descendants.
func (s *Scope) Within(anc *Scope) bool {
	for x := s; x != nil; x = x.parent {
		if x == anc {
			return true
		}
	}
	return false
}

func (s *Scope) String() string { return fmt.Sprintf("scope %q #%d", s.name, s.id) }

// Wait blocks until the scope has no transition in flight, then returns the error of a
// failed load, if any. A pending scope returns at once.
func (s *Scope) Wait(cx context.Context) error {
	for {
		s.r.mu.RLock()
		if !s.eng.running {
			err := s.err
			s.r.mu.RUnlock()
			return err
		}
		ch := s.eng.idle
		s.r.mu.RUnlock()
		select {
		case <-ch:
		case <-cx.Done():
			return cx.Err()
		}
	}
}

// Dispose unloads the scope for good: every effect is undone (children first, in reverse
// order) and the scope ends [Disposed]. It is idempotent and returns the joined errors of
// the cleanups. Disposing the root unloads the whole tree.
//
// cx bounds the wait, and its deadline, if it has one, is the deadline of the context every
// disposer of the unload receives (the disposers of child scopes and of dependents that
// unload because a service goes away included), as fx passes OnStop's context to its hooks.
// When cx ends first, Dispose returns cx's error; the unload goes on and the scope still
// ends Disposed.
//
// Called with a context that belongs to s or one of its descendants (for example from
// inside the scope's own apply function), Dispose only starts the disposal and returns nil,
// since waiting there would deadlock.
func (s *Scope) Dispose(cx context.Context) error { return s.dispose(cx, nil) }

// dispose is Dispose; parent is the scope whose unload waits for this disposal, if any (the
// plugin effect of a child scope), recorded so that the wait cannot close a cycle.
func (s *Scope) dispose(cx context.Context, parent *Scope) error {
	r := s.r
	c, isCtx := cx.(*Context)
	self := isCtx && c.scope.Within(s)
	r.mu.Lock()
	if !self {
		s.noteDeadlineLocked(cx)
	}
	started := false
	if !s.disposing {
		started = true
		s.disposing = true
		s.doomLocked()
		if s.entry != nil {
			s.entry.detachLocked()
		}
		for _, k := range s.deps {
			delete(r.dependents[k.name], s)
		}
		if s.def != nil {
			if set := r.runtimes[s.def]; set != nil {
				delete(set, s)
				if len(set) == 0 {
					delete(r.runtimes, s.def)
				}
			}
		}
		s.kickLocked()
	}
	r.mu.Unlock()
	if started {
		ScopeDisposed.emitInternal(r, s)
	}
	if self {
		return nil
	}
	if parent != nil {
		r.mu.Lock()
		e := r.addWaitLocked(parent, s, false)
		r.mu.Unlock()
		defer func() {
			r.mu.Lock()
			r.removeWaitLocked(e)
			r.mu.Unlock()
		}()
	}
	select {
	case <-s.done:
		return s.disposeErr
	case <-cx.Done():
		return cx.Err()
	}
}

// Restart unloads the scope and loads it again with the same configuration and fresh
// effects, clearing a stored failure. It waits for the new load (bounded by ctx) and
// returns its error; ctx's deadline, if any, is also the deadline of the context the
// unload's disposers receive (see [Scope.Dispose]). Restarting the root unloads everything
// mounted on it and leaves it active and empty, like disposing the root in Cordis.
func (s *Scope) Restart(cx context.Context) error {
	r := s.r
	c, isCtx := cx.(*Context)
	self := isCtx && c.scope.Within(s)
	r.mu.Lock()
	if s.disposing {
		r.mu.Unlock()
		return fmt.Errorf("restart %s: %w", s, ErrInactive)
	}
	if !self {
		s.noteDeadlineLocked(cx)
	}
	s.restartLocked()
	r.mu.Unlock()
	return s.Wait(cx)
}

func (s *Scope) restartLocked() {
	s.gen++
	s.err = nil
	s.failed = epoch{}
	s.doomLocked()
	s.kickLocked()
}

// Update validates a new configuration synchronously and applies it. If the scope is active
// and every update hook registered with [Context.OnUpdate] accepts the new value, the change
// is taken in place; otherwise the scope restarts with it (without waiting; use Wait). An
// invalid configuration is returned as an error and changes nothing.
func (s *Scope) Update(raw any) error {
	if s.def == nil {
		return fmt.Errorf("update: %w", ErrRootOnly)
	}
	cfg, err := s.def.decode(raw)
	if err != nil {
		return err
	}
	r := s.r
	r.mu.Lock()
	if s.disposing {
		r.mu.Unlock()
		return fmt.Errorf("update %s: %w", s, ErrInactive)
	}
	s.raw = raw
	if s.state == Active && s.cur != nil && len(s.cur.hooks) > 0 {
		hooks := slices.Clone(s.cur.hooks)
		act := s.cur
		r.mu.Unlock()
		accepted := true
		for _, h := range hooks {
			ok := false
			if err := Safely(func() error { ok = h.fn(cfg); return nil }); err != nil {
				s.logger.Error("update hook failed", "err", err)
			}
			if !ok {
				accepted = false
				break
			}
		}
		r.mu.Lock()
		if accepted && s.cur == act {
			s.cfg = cfg
			r.mu.Unlock()
			return nil
		}
	}
	s.restartLocked()
	r.mu.Unlock()
	return nil
}

type updateHook struct {
	fn func(cfg any) bool
}

// OnUpdate registers a hook, as an effect of c's activation, that [Scope.Update] consults
// before restarting the scope. The hook receives the new decoded and validated
// configuration (the plugin's config type) and returns true to accept it in place, having
// applied it itself. If any hook declines, the scope restarts.
func (c *Context) OnUpdate(fn func(cfg any) bool) error {
	h := &updateHook{fn: fn}
	r := c.scope.r
	r.mu.Lock()
	defer r.mu.Unlock()
	act := c.activationLocked()
	_, err := c.attachLocked("update hook", func(context.Context) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		act.hooks = slices.DeleteFunc(act.hooks, func(x *updateHook) bool { return x == h })
		return nil
	})
	if err != nil {
		return err
	}
	act.hooks = append(act.hooks, h)
	return nil
}

// doomLocked cancels the current activation's context early, so a running apply or
// goroutine can stop before the unload reaches it.
func (s *Scope) doomLocked() {
	if s.cur != nil && s.cur.cancel != nil {
		s.cur.cancel(ErrScopeUnloaded)
	}
}

// epochLocked computes the target epoch.
func (s *Scope) epochLocked() epoch {
	if s.disposing {
		return epoch{}
	}
	e := epoch{ok: true, gen: s.gen}
	if len(s.deps) == 0 {
		return e
	}
	e.ids = make([]uint64, len(s.deps))
	for i, k := range s.deps {
		im := s.r.services[k]
		if im == nil || im.provider.state != Active {
			return epoch{}
		}
		e.ids[i] = im.provider.id
	}
	return e
}

// kickLocked makes sure a transition goroutine is looking at s: its engine runs
// transitions once more.
func (s *Scope) kickLocked() {
	if s.state != Disposed {
		s.eng.kickLocked(false)
	}
}

// initEngine sets up the scope's transition engine, on the root's lock. Its goroutine
// counts as a transition in flight of the tree (Settle) from its start to its end.
func (s *Scope) initEngine() {
	r := s.r
	s.eng = engine{mu: &r.mu, idle: closedChan,
		fn: func() {
			s.transitionsLocked()
			s.deadline = time.Time{}
		},
		started: func() {
			if r.inflight == 0 {
				r.idle = make(chan struct{})
			}
			r.inflight++
		},
		ended: func() {
			r.inflight--
			if r.inflight == 0 {
				close(r.idle)
			}
		},
	}
}

// transitionsLocked moves the scope towards its target epoch, one transition at a time,
// until nothing is left to do. It runs on the scope's engine, with r.mu held (released
// while user code runs).
func (s *Scope) transitionsLocked() {
	if s.state == Disposed {
		return // a kick that came during the last transitions
	}
	for {
		ep := s.epochLocked()
		if s.state == Active {
			if ep.equal(s.loaded) {
				break
			}
			s.unloadLocked()
			continue
		}
		if s.disposing {
			s.setStateLocked(Disposed)
			if s.parent == nil {
				s.rootCancel(ErrScopeUnloaded) // the root's contexts end with the tree
			}
			close(s.done)
			break
		}
		if !ep.ok || (s.state == Failed && s.failed.equal(ep)) {
			if s.state == Unloading || s.state == Loading {
				s.setStateLocked(Pending)
			}
			break
		}
		s.loadLocked(ep)
	}
}

// setStateLocked records a state change, notifies dependents of the services s provides
// when it enters or leaves Active, and emits StatusChanged with the lock released.
func (s *Scope) setStateLocked(st State) {
	old := s.state
	if old == st {
		return
	}
	s.state = st
	if old == Active || st == Active {
		for _, im := range s.provided {
			s.r.kickDependentsLocked(im.key)
		}
	}
	r := s.r
	if len(r.snapshot(StatusChanged.d)) == 0 {
		return
	}
	r.mu.Unlock()
	StatusChanged.emitInternal(r, StatusChange{Scope: s, Old: old, New: st})
	r.mu.Lock()
}

func (s *Scope) loadLocked(ep epoch) {
	r := s.r
	gen := s.gen
	if s.def == nil { // the root: a fresh, empty activation
		s.cur = newActivation(s, s.mountCtx)
		s.loaded = ep
		s.setStateLocked(Active)
		return
	}
	stdcx, cancel := context.WithCancelCause(s.mountCtx.std)
	c := &Context{std: stdcx, scope: s, iso: s.mountCtx.iso, icp: s.mountCtx.icp}
	act := newActivation(s, c)
	act.cancel = cancel
	c.act = act
	act.store = s.snapshotLocked()
	s.cur = act
	s.setStateLocked(Loading)

	var err error
	if s.epochLocked().equal(ep) && s.gen == gen {
		raw := s.raw
		r.mu.Unlock()
		var cfg any
		cfg, err = s.def.decode(raw)
		if err == nil {
			r.mu.Lock()
			s.cfg = cfg
			r.mu.Unlock()
			err = Safely(func() error { return s.def.apply(c, cfg) })
		}
		r.mu.Lock()
	}
	doomed := s.disposing || s.gen != gen
	switch {
	case err != nil && !doomed:
		s.err = err
		s.failed = ep
		s.logger.Error("plugin failed to load", "err", err)
		s.unloadLocked()
		if !s.disposing {
			s.setStateLocked(Failed)
		}
	case err == nil && !doomed && s.epochLocked().equal(ep):
		s.err = nil
		s.failed = epoch{}
		s.loaded = ep
		act.store = s.snapshotLocked()
		s.setStateLocked(Active)
	default:
		s.unloadLocked()
	}
}

// unloadLocked disposes the current activation's effects. The lock is released while
// cleanups run.
func (s *Scope) unloadLocked() {
	r := s.r
	act := s.cur
	act.closing = true
	uctx, cancel := s.unwindLocked()
	// Leaving Active wakes the dependents of the services s provides, which may begin
	// their unload before the withdrawal's disposer runs: they get the deadline now.
	for _, im := range s.provided {
		for _, d := range r.dependentsLocked(im.key) {
			d.noteDeadlineLocked(uctx)
		}
	}
	s.setStateLocked(Unloading)
	r.mu.Unlock()
	if act.cancel != nil {
		act.cancel(ErrScopeUnloaded)
	}
	err := act.top.dispose(uctx)
	cancel()
	r.mu.Lock()
	act.ended = true
	s.cur = nil
	s.loaded = epoch{}
	if err != nil {
		s.logger.Error("cleanup failed", "err", err)
		if s.disposing {
			s.disposeErr = errors.Join(s.disposeErr, err)
		}
	}
}
