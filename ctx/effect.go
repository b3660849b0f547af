package ctx

import (
	"context"
	"errors"
	"fmt"
)

// Disposer undoes one effect. It is idempotent: the first call runs the cleanup, later
// calls wait for that run and return its result. The context bounds waiting only; cleanup
// code receives it to bound its own work.
type Disposer func(context.Context) error

// EffectInfo describes a live effect, for diagnostics.
type EffectInfo struct {
	Label    string
	Children []EffectInfo
}

// node is one effect: a cleanup function, nested effects, or both. Nested nodes live in an
// intrusive list so that removing one is O(1). Fields are guarded by root.mu except where
// noted.
type node struct {
	r          *root
	label      string
	fn         func(context.Context) error // own cleanup, runs after children
	parent     *node
	prev, next *node
	head, tail *node
	setupDone  chan struct{} // non-nil for an Effect; closed when its setup returned
	inSetup    bool          // setup still running: registrations are accepted even while disposing
	cancel     context.CancelCauseFunc
	disposing  bool
	done       chan struct{}
	err        error // valid once done is closed
}

func (n *node) pushLocked(c *node) {
	c.parent = n
	c.prev = n.tail
	if n.tail != nil {
		n.tail.next = c
	} else {
		n.head = c
	}
	n.tail = c
}

func (n *node) detachLocked() {
	p := n.parent
	if p == nil {
		return
	}
	if n.prev != nil {
		n.prev.next = n.next
	} else {
		p.head = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else {
		p.tail = n.prev
	}
	n.parent, n.prev, n.next = nil, nil, nil
}

// dispose runs the node's cleanup once: nested effects newest first, then its own function.
// Every cleanup runs even when one fails; their errors are joined.
func (n *node) dispose(cx context.Context) error {
	r := n.r
	r.mu.Lock()
	if n.disposing {
		r.mu.Unlock()
		select {
		case <-n.done:
			return n.err
		case <-cx.Done():
			return cx.Err()
		}
	}
	n.disposing = true
	n.detachLocked()
	r.mu.Unlock()

	if n.cancel != nil {
		n.cancel(ErrScopeUnloaded)
	}
	if n.setupDone != nil {
		<-n.setupDone
	}
	var errs []error
	for {
		r.mu.Lock()
		c := n.tail
		if c != nil {
			c.detachLocked()
		}
		r.mu.Unlock()
		if c == nil {
			break
		}
		if err := c.dispose(cx); err != nil {
			errs = append(errs, err)
		}
	}
	if n.fn != nil {
		if err := Safely(func() error { return n.fn(cx) }); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", n.label, err))
		}
	}
	n.err = errors.Join(errs...)
	close(n.done)
	return n.err
}

// release takes a node whose work ended by itself out of its owner's effects, unless it is
// being disposed already.
func (n *node) release() {
	n.r.mu.Lock()
	defer n.r.mu.Unlock()
	if !n.disposing {
		n.detachLocked()
	}
}

func (n *node) info() EffectInfo {
	in := EffectInfo{Label: n.label}
	for c := n.head; c != nil; c = c.next {
		in.Children = append(in.Children, c.info())
	}
	return in
}

// attach registers a new effect node under c (its enclosing effect, or its activation's top
// level). It fails with ErrInactive when that owner is unloading or gone.
func (c *Context) attach(label string, fn func(context.Context) error) (*node, error) {
	r := c.scope.r
	r.mu.Lock()
	defer r.mu.Unlock()
	return c.attachLocked(label, fn)
}

func (c *Context) attachLocked(label string, fn func(context.Context) error) (*node, error) {
	owner := c.node
	act := c.activationLocked()
	if owner == nil {
		if act == nil {
			return nil, fmt.Errorf("%s in scope %q: %w", label, c.scope.name, ErrInactive)
		}
		owner = act.top
	}
	if !owner.inSetup && (act == nil || act.closing || owner.disposing) {
		return nil, fmt.Errorf("%s in scope %q: %w", label, c.scope.name, ErrInactive)
	}
	n := &node{r: c.scope.r, label: label, fn: fn, done: make(chan struct{})}
	owner.pushLocked(n)
	return n, nil
}

// Effect is the handle an effect's setup function receives.
type Effect struct {
	n   *node
	ctx *Context
}

// Defer adds a cleanup to the effect. Cleanups run newest first when the effect is
// disposed. A cleanup deferred after the effect was disposed runs at once.
func (e *Effect) Defer(fn func(context.Context) error) {
	if _, err := e.ctx.attach("defer", fn); err != nil {
		e.ctx.runLate(e.n.label, fn)
	}
}

// runLate runs a cleanup whose registration was refused, at once, so that what it releases
// does not leak; its error is logged.
func (c *Context) runLate(label string, fn func(context.Context) error) {
	if err := Safely(func() error { return fn(c.scope.r.unwindCtx) }); err != nil {
		c.Logger().Error("late cleanup failed", "effect", label, "err", err)
	}
}

// Context returns a context whose registrations (effects, listeners, services, plugins)
// nest under this effect, and whose Done closes when the effect is disposed or its scope
// unloads.
func (e *Effect) Context() *Context { return e.ctx }

// Effect registers an effect on c's scope. setup runs at once on the calling goroutine and
// registers cleanups with [Effect.Defer]; registrations made through [Effect.Context] nest
// under the effect. If setup fails (or panics), the cleanups it registered run newest first
// and the error is returned. The returned disposer undoes the effect; the scope's unload
// does so too. An unload that starts while setup runs cancels the effect's context and
// waits for setup to return before cleaning up.
func (c *Context) Effect(label string, setup func(e *Effect) error) (Disposer, error) {
	if label == "" {
		label = "anonymous"
	}
	r := c.scope.r
	r.mu.Lock()
	n, err := c.attachLocked(label, nil)
	if err != nil {
		r.mu.Unlock()
		return nil, err
	}
	stdcx, cancel := context.WithCancelCause(c.std)
	n.cancel = cancel
	n.setupDone = make(chan struct{})
	n.inSetup = true
	r.mu.Unlock()

	ec := *c
	ec.std = stdcx
	ec.node = n
	e := &Effect{n: n, ctx: &ec}
	err = Safely(func() error { return setup(e) })
	r.mu.Lock()
	n.inSetup = false
	r.mu.Unlock()
	close(n.setupDone)
	if err != nil {
		return nil, errors.Join(err, n.dispose(r.unwindCtx))
	}
	return n.dispose, nil
}

// Defer registers fn as an effect whose only job is cleanup: it runs when the returned
// disposer is called or the scope unloads. If c is inactive (its activation is unloading or
// has ended), fn runs at once on the calling goroutine, as [Effect.Defer] does, and Defer
// returns an error wrapping [ErrInactive]: a goroutine that acquired something and defers
// its release too late does not leak it. fn must therefore not need a lock the caller holds
// while calling Defer, and the caller must not release the resource again.
func (c *Context) Defer(label string, fn func(context.Context) error) (Disposer, error) {
	n, err := c.attach(label, fn)
	if err != nil {
		c.runLate(label, fn)
		return nil, err
	}
	return n.dispose, nil
}

// Go runs fn on a goroutine owned by c's scope. Its context is cancelled, and the goroutine
// joined, when the returned disposer runs or the scope unloads. An error other than the
// cancellation is logged. A goroutine that returns on its own leaves the scope's effects
// (the disposer then has nothing left to do), so a scope may start any number of
// short-lived goroutines.
func (c *Context) Go(label string, fn func(context.Context) error) (Disposer, error) {
	stdcx, cancel := context.WithCancelCause(c.std)
	finished := make(chan struct{})
	n, err := c.attach(label, func(cx context.Context) error {
		cancel(ErrScopeUnloaded)
		select {
		case <-finished:
			return nil
		case <-cx.Done():
			return fmt.Errorf("goroutine %q did not stop: %w", label, cx.Err())
		}
	})
	if err != nil {
		cancel(err)
		return nil, err
	}
	go func() {
		defer close(finished)
		defer n.release()
		defer cancel(nil) // its context leaves c's with it
		err := Safely(func() error { return fn(stdcx) })
		if err != nil && stdcx.Err() == nil {
			c.Logger().Error("goroutine failed", "goroutine", label, "err", err)
		} else if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, ErrScopeUnloaded) {
			c.Logger().Debug("goroutine ended after cancellation", "goroutine", label, "err", err)
		}
	}()
	return n.dispose, nil
}
