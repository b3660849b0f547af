package ctx

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// Key names a service of type T. Make one with [NewKey] in a package-level variable.
// Providing, using and getting a service are methods on its key.
type Key[T any] struct{ name string }

// NewKey returns the key for the service called name.
func NewKey[T any](name string) Key[T] { return Key[T]{name: name} }

// Name returns the service name.
func (k Key[T]) Name() string { return k.name }

type serviceKey struct {
	name  string
	realm *realm
}

// impl is one provided service value. Fields are immutable.
type impl struct {
	key      serviceKey
	value    any
	provider *Scope
}

// Provide makes v the service k as an effect of c's scope: the returned disposer (or the
// scope's unload) withdraws it. Dependents see it once the providing scope is [Active]
// (services provided by the root are visible at once). A second provider in the same
// isolation realm is an error naming the first.
//
// Withdrawing a service first unloads its dependents and waits for them, so they never
// outlive the provider's teardown, with one exception that keeps mutual dependencies from
// stalling the tree: a withdrawal does not wait for a dependent that is itself waiting,
// directly or through the teardowns it waits for, on this scope's teardown (see
// docs/design.md, "Services"). The context given to the disposer (the unload's, when the
// scope unloads) bounds the wait and its deadline becomes the dependents' unload deadline;
// when it ends first, the disposer returns an error wrapping the context's error, the
// service is gone all the same and the dependents finish unloading on their own.
func (k Key[T]) Provide(c *Context, v T) (Disposer, error) {
	return c.provide(k.name, v)
}

// Use returns the service k as seen from c. The service must be injected by c's plugin or an
// ancestor's, provided by c's own scope, or provided by the root; otherwise Use panics with
// an error wrapping [ErrNotInjected] that names the service and the scope (inside an apply
// function, that panic becomes the load error). Through a context whose activation has
// ended, Use panics with an error wrapping [ErrInactive].
func (k Key[T]) Use(c *Context) T {
	v, err := c.use(k.name)
	if err != nil {
		panic(err)
	}
	t, _ := v.(T)
	return t
}

// Get returns the service k if it is provided in c's realm by an active scope, whether or
// not it is injected. It does not make the caller depend on it: use it for optional
// services, and expect the value to go away later.
func (k Key[T]) Get(c *Context) (T, bool) {
	r := c.scope.r
	r.mu.RLock()
	im := r.services[serviceKey{k.name, c.realm(k.name)}]
	ok := im != nil && im.provider.state == Active
	r.mu.RUnlock()
	if !ok {
		var zero T
		return zero, false
	}
	t, _ := im.value.(T)
	return t, true
}

// ServiceChange reports a service provided or withdrawn.
type ServiceChange struct {
	Name     string
	Provided bool
	Scope    *Scope
}

// Built-in lifecycle events.
var (
	// ScopeCreated is emitted when a plugin scope is mounted, before it loads.
	ScopeCreated = NewEvent[*Scope]("ctx/scope-created")
	// ScopeDisposed is emitted when a scope's disposal starts.
	ScopeDisposed = NewEvent[*Scope]("ctx/scope-disposed")
	// StatusChanged is emitted on every state transition of every scope.
	StatusChanged = NewEvent[StatusChange]("ctx/status")
	// ServiceChanged is emitted when a service is provided or withdrawn.
	ServiceChanged = NewEvent[ServiceChange]("ctx/service")
)

// StatusChange reports one state transition.
type StatusChange struct {
	Scope    *Scope
	Old, New State
}

func (c *Context) provide(name string, v any) (Disposer, error) {
	s := c.scope
	r := s.r
	key := serviceKey{name, c.realm(name)}
	r.mu.Lock()
	if prev := r.services[key]; prev != nil {
		r.mu.Unlock()
		return nil, fmt.Errorf("service %q in scope %q: %w by scope %q", name, s.name, ErrDuplicateService, prev.provider.name)
	}
	im := &impl{key: key, value: v, provider: s}
	n, err := c.attachLocked("provide:"+name, func(wcx context.Context) error {
		r.mu.Lock()
		if r.services[key] == im {
			delete(r.services, key)
		}
		s.provided = slices.DeleteFunc(s.provided, func(x *impl) bool { return x == im })
		waits := r.kickDependentsLocked(key)
		for _, d := range waits {
			d.noteDeadlineLocked(wcx) // the dependents' disposers get the withdrawal's deadline
		}
		r.mu.Unlock()
		ServiceChanged.emitInternal(r, ServiceChange{Name: name, Scope: s})
		var errs []error
		for _, d := range waits {
			if s.Within(d) { // an ancestor's unload is what disposes s: it cannot finish first
				continue
			}
			if err := r.awaitDependent(wcx, s, d, name); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	})
	if err != nil {
		r.mu.Unlock()
		return nil, err
	}
	r.services[key] = im
	s.provided = append(s.provided, im)
	if s.state == Active {
		r.kickDependentsLocked(key)
	}
	r.mu.Unlock()
	ServiceChanged.emitInternal(r, ServiceChange{Name: name, Provided: true, Scope: s})
	return n.dispose, nil
}

// kickDependentsLocked wakes every scope that injects key and returns them.
func (r *root) kickDependentsLocked(key serviceKey) []*Scope {
	out := r.dependentsLocked(key)
	for _, d := range out {
		d.kickLocked()
	}
	return out
}

// dependentsLocked returns every scope that injects key.
func (r *root) dependentsLocked(key serviceKey) []*Scope {
	var out []*Scope
	for d := range r.dependents[key.name] {
		if slices.Contains(d.deps, key) {
			out = append(out, d)
		}
	}
	return out
}

// snapshotLocked captures the injected services for an activation.
func (s *Scope) snapshotLocked() map[string]*impl {
	if len(s.deps) == 0 {
		return nil
	}
	m := make(map[string]*impl, len(s.deps))
	for _, k := range s.deps {
		if im := s.r.services[k]; im != nil {
			m[k.name] = im
		}
	}
	return m
}

func (c *Context) use(name string) (any, error) {
	r := c.scope.r
	r.mu.RLock()
	defer r.mu.RUnlock()
	if c.act != nil && c.act.ended {
		return nil, fmt.Errorf("cannot use service %q in scope %q: %w", name, c.scope.name, ErrInactive)
	}
	key := serviceKey{name, c.realm(name)}
	im := r.services[key]
	for level := c.scope; level != nil; level = level.parent {
		var store map[string]*impl
		if level == c.scope && c.act != nil {
			store = c.act.store
		} else if level.cur != nil {
			store = level.cur.store
		}
		if got, ok := store[name]; ok {
			return got.value, nil
		}
		if im != nil && im.provider == level {
			return im.value, nil
		}
		for _, k := range level.deps {
			if k.name == name {
				return nil, fmt.Errorf("cannot use service %q in scope %q: injected by %q but not loaded: %w", name, c.scope.name, level.name, ErrInactive)
			}
		}
	}
	return nil, fmt.Errorf("cannot use service %q in scope %q: add it to the plugin's Inject list: %w", name, c.scope.name, ErrNotInjected)
}

func sortScopes(s []*Scope) {
	slices.SortFunc(s, func(a, b *Scope) int {
		switch {
		case a.id < b.id:
			return -1
		case a.id > b.id:
			return 1
		}
		return 0
	})
}
