package ctx

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
)

// eventDesc identifies one declared event. id indexes each tree's table of listener lists.
type eventDesc struct {
	name string
	id   int
}

// eventIDs numbers the declared events.
var eventIDs atomic.Int64

func newEventDesc(name string) *eventDesc {
	return &eventDesc{name: name, id: int(eventIDs.Add(1) - 1)}
}

// listener is one registration. Immutable once published.
type listener struct {
	fn      any
	ctx     *Context
	subtree bool
	global  bool
}

// ListenOption adjusts a listener registration.
type ListenOption uint8

const (
	// Prepend puts the listener before those already registered.
	Prepend ListenOption = 1 << iota
	// Subtree admits only events dispatched from the listener's own scope or its
	// descendants.
	Subtree
	// Global admits every event, bypassing dispatch filters ([Target]).
	Global
)

// DispatchOption adjusts one dispatch.
type DispatchOption func(*dispatchConfig)

type dispatchConfig struct {
	target func(listener *Context) bool
}

// Target restricts a dispatch to listeners whose registering context satisfies filter
// (listeners registered with [Global] are always called).
func Target(filter func(listener *Context) bool) DispatchOption {
	return func(d *dispatchConfig) { d.target = filter }
}

func (c *Context) listen(d *eventDesc, fn any, opts []ListenOption) (Disposer, error) {
	var o ListenOption
	for _, x := range opts {
		o |= x
	}
	l := &listener{fn: fn, ctx: c, subtree: o&Subtree != 0, global: o&Global != 0}
	r := c.scope.r
	r.mu.Lock()
	defer r.mu.Unlock()
	n, err := c.attachLocked("on:"+d.name, func(context.Context) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		old := r.snapshot(d)
		if i := slices.Index(old, l); i >= 0 {
			next := make([]*listener, 0, len(old)-1)
			r.publishLocked(d, append(append(next, old[:i]...), old[i+1:]...))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	old := r.snapshot(d)
	next := make([]*listener, 0, len(old)+1)
	if o&Prepend != 0 {
		next = append(append(next, l), old...)
	} else {
		next = append(append(next, old...), l)
	}
	r.publishLocked(d, next)
	return n.dispose, nil
}

// listenerTable holds a tree's listeners: per event (indexed by eventDesc.id), a slice that
// is replaced, never modified. Both the table and the slices are copy-on-write under the
// tree's lock, so that a dispatch reads its listeners with two atomic loads and no lock. A
// lock, even a read lock, is a write to memory every core shares: a tool call dispatches
// three events, and read locks on the tree's mutex kept the registry's call path from
// scaling with cores (issue 39).
type listenerTable []atomic.Pointer[[]*listener]

// snapshot returns the listeners of d; filtering is the dispatcher's. The returned slice is
// never modified afterwards. It takes no lock.
func (r *root) snapshot(d *eventDesc) []*listener {
	t := r.listeners.Load()
	if t == nil || d.id >= len(*t) {
		return nil
	}
	if ls := (*t)[d.id].Load(); ls != nil {
		return *ls
	}
	return nil
}

// publishLocked makes ls the listeners of d; r.mu is held. The table grows to the highest
// event id listened to in the tree.
func (r *root) publishLocked(d *eventDesc, ls []*listener) {
	t := r.listeners.Load()
	if t == nil || d.id >= len(*t) {
		grown := make(listenerTable, d.id+1)
		if t != nil {
			for i := range *t {
				grown[i].Store((*t)[i].Load())
			}
		}
		t = &grown
		r.listeners.Store(t)
	}
	(*t)[d.id].Store(&ls)
}

func admit(l *listener, src *Scope, cfg *dispatchConfig) bool {
	if l.global {
		return true
	}
	if l.subtree && (src == nil || !src.Within(l.ctx.scope)) {
		return false
	}
	return cfg == nil || cfg.target == nil || cfg.target(l.ctx)
}

func dispatchConfigOf(opts []DispatchOption) *dispatchConfig {
	if len(opts) == 0 {
		return nil
	}
	cfg := &dispatchConfig{}
	for _, o := range opts {
		o(cfg)
	}
	return cfg
}

// Event is an event with argument type A whose listeners return only an error. Dispatch it
// with Emit (in order, stop at the first error) or Parallel (all at once, errors joined).
type Event[A any] struct{ d *eventDesc }

// NewEvent declares an event. Keep it in a package-level variable: the value, not the name,
// identifies the event.
func NewEvent[A any](name string) Event[A] { return Event[A]{newEventDesc(name)} }

// Name returns the event's name.
func (e Event[A]) Name() string { return e.d.name }

// On registers fn as a listener, an effect of c's scope.
func (e Event[A]) On(c *Context, fn func(A) error, opts ...ListenOption) (Disposer, error) {
	return c.listen(e.d, fn, opts)
}

// Once registers fn to be called at most once; it unregisters itself first.
func (e Event[A]) Once(c *Context, fn func(A) error, opts ...ListenOption) (Disposer, error) {
	var once sync.Once
	var dispose Disposer
	var mu sync.Mutex
	d, err := c.listen(e.d, func(a A) error {
		run := false
		once.Do(func() { run = true })
		if !run {
			return nil
		}
		mu.Lock()
		dd := dispose
		mu.Unlock()
		if dd != nil {
			_ = dd(context.Background())
		}
		return fn(a)
	}, opts)
	mu.Lock()
	dispose = d
	mu.Unlock()
	return d, err
}

// Emit calls the listeners in order on the calling goroutine and stops at the first error
// (a panic counts as one), which it returns.
func (e Event[A]) Emit(c *Context, a A, opts ...DispatchOption) error {
	return emitList(c.scope.r.snapshot(e.d), c.scope, a, dispatchConfigOf(opts))
}

func emitList[A any](ls []*listener, src *Scope, a A, cfg *dispatchConfig) (err error) {
	if len(ls) == 0 {
		return nil
	}
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v}
		}
	}()
	for _, l := range ls {
		if (l.subtree || l.global || cfg != nil) && !admit(l, src, cfg) {
			continue
		}
		if err := l.fn.(func(A) error)(a); err != nil {
			return err
		}
	}
	return nil
}

// emitInternal emits a built-in event from the root. Unlike Emit it isolates the listeners
// from one another: every admitted listener is called, and one that returns an error or
// panics is logged with its own scope's logger while delivery goes on, so a faulty plugin
// cannot starve the listeners registered after it.
func (e Event[A]) emitInternal(r *root, a A) {
	for _, l := range r.snapshot(e.d) {
		if (l.subtree || l.global) && !admit(l, nil, nil) {
			continue
		}
		fn := l.fn.(func(A) error)
		if err := Safely(func() error { return fn(a) }); err != nil {
			l.ctx.Logger().Error("listener failed", "event", e.d.name, "err", err)
		}
	}
}

// Parallel calls every admitted listener concurrently, waits for all of them and returns
// their errors joined.
func (e Event[A]) Parallel(c *Context, a A, opts ...DispatchOption) error {
	cfg := dispatchConfigOf(opts)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, l := range c.scope.r.snapshot(e.d) {
		if !admit(l, c.scope, cfg) {
			continue
		}
		wg.Go(func() {
			if err := Safely(func() error { return l.fn.(func(A) error)(a) }); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Bail is an event whose listeners may answer: Serial calls them in order and the first
// that returns ok=true decides the result.
type Bail[A, R any] struct{ d *eventDesc }

// NewBail declares a bail event.
func NewBail[A, R any](name string) Bail[A, R] { return Bail[A, R]{newEventDesc(name)} }

// Name returns the event's name.
func (e Bail[A, R]) Name() string { return e.d.name }

// On registers fn as a listener, an effect of c's scope.
func (e Bail[A, R]) On(c *Context, fn func(A) (R, bool, error), opts ...ListenOption) (Disposer, error) {
	return c.listen(e.d, fn, opts)
}

// Serial calls the listeners in order until one returns ok=true or an error, and returns
// that answer. With no answer it returns the zero R and false.
func (e Bail[A, R]) Serial(c *Context, a A, opts ...DispatchOption) (R, bool, error) {
	cfg := dispatchConfigOf(opts)
	var zero R
	for _, l := range c.scope.r.snapshot(e.d) {
		if !admit(l, c.scope, cfg) {
			continue
		}
		var (
			res R
			ok  bool
		)
		err := Safely(func() (err error) {
			res, ok, err = l.fn.(func(A) (R, bool, error))(a)
			return err
		})
		if err != nil {
			return zero, false, err
		}
		if ok {
			return res, true, nil
		}
	}
	return zero, false, nil
}

// Chain is a middleware (waterfall) event: each listener receives the argument and a next
// function that runs the rest of the chain (ending in the dispatcher's own function), and
// may change or replace the result, or not call next at all.
type Chain[A, R any] struct{ d *eventDesc }

// NewChain declares a waterfall event.
func NewChain[A, R any](name string) Chain[A, R] { return Chain[A, R]{newEventDesc(name)} }

// Name returns the event's name.
func (e Chain[A, R]) Name() string { return e.d.name }

// On registers fn as a middleware, an effect of c's scope.
func (e Chain[A, R]) On(c *Context, fn func(a A, next func() (R, error)) (R, error), opts ...ListenOption) (Disposer, error) {
	return c.listen(e.d, fn, opts)
}

// Listened reports whether any listener of the event is registered in c's tree (filters of
// the dispatch aside). Dispatching without listeners is cheap already, one snapshot read; a
// dispatcher whose arguments cost something to build (a closure for last, say) can skip
// building them when Listened is false.
func (e Chain[A, R]) Listened(c *Context) bool { return len(c.scope.r.snapshot(e.d)) > 0 }

// Waterfall runs the chain for a. last runs after every listener called next (nil: the zero
// R). Calling next a second time returns [ErrNextCalled] without running anything.
func (e Chain[A, R]) Waterfall(c *Context, a A, last func() (R, error), opts ...DispatchOption) (R, error) {
	ls := c.scope.r.snapshot(e.d)
	if len(ls) == 0 {
		if last == nil {
			var zero R
			return zero, nil
		}
		return last()
	}
	cfg := dispatchConfigOf(opts)
	var step func(i int) (R, error)
	step = func(i int) (R, error) {
		for i < len(ls) && !admit(ls[i], c.scope, cfg) {
			i++
		}
		if i == len(ls) {
			if last == nil {
				var zero R
				return zero, nil
			}
			return last()
		}
		called := false
		next := func() (R, error) {
			if called {
				var zero R
				return zero, ErrNextCalled
			}
			called = true
			return step(i + 1)
		}
		var res R
		err := Safely(func() (err error) {
			res, err = ls[i].fn.(func(A, func() (R, error)) (R, error))(a, next)
			return err
		})
		return res, err
	}
	return step(0)
}
