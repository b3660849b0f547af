package toolregistry

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// errTimeout is the cancellation cause of a call whose own timeout expired. It matches
// context.DeadlineExceeded with errors.Is.
var errTimeout = fmt.Errorf("toolregistry: tool timeout: %w", context.DeadlineExceeded)

// callContext is the context a tool runs under: the caller's context, which the registry
// can also end on its own (at the tool's timeout, through [Call.Cancel], when the call
// returns). It reports the call's deadline when the registry enforces one, and
// context.DeadlineExceeded as its error once that has passed, as a context made by
// context.WithTimeout would; contexts derived from it report context.Canceled, with
// errTimeout as their cause.
//
// It costs nothing until the tool waits on it. The standard context that carries the Done
// channel, derived from the caller's (which takes the caller's context's lock to register
// it there), is made by the first call of Done; a tool that never waits (most built-in
// tools) makes none. A registration with the caller's context was, with the other shared
// writes, what kept concurrent calls from one context from scaling with cores (issue 39).
// Until then context.Cause reports the caller's cause, or Err.
//
// A callContext is safe for concurrent use; init it before the tool runs.
type callContext struct {
	base     context.Context // the caller's
	deadline time.Time       // the registry's deadline; zero: the caller's applies
	index    int             // in deadlines.heap; -1 once out of it
	std      atomic.Pointer[stdContext]
	mu       sync.Mutex
	ended    error // why the call ended before std was made; guarded by mu
}

// stdContext is a callContext's standard context, once made.
type stdContext struct {
	cx     context.Context
	cancel context.CancelCauseFunc
}

// init readies c (zero) for a call under base.
func (c *callContext) init(bcx context.Context) {
	c.base, c.index = bcx, -1
}

// Deadline implements context.Context.
func (c *callContext) Deadline() (time.Time, bool) {
	if !c.deadline.IsZero() {
		return c.deadline, true
	}
	return c.base.Deadline()
}

// Done implements context.Context.
func (c *callContext) Done() <-chan struct{} { return c.standard().Done() }

// Err implements context.Context.
func (c *callContext) Err() error {
	if s := c.std.Load(); s != nil {
		err := s.cx.Err()
		if err != nil && errors.Is(context.Cause(s.cx), errTimeout) {
			return context.DeadlineExceeded
		}
		return err
	}
	c.mu.Lock()
	ended := c.ended
	c.mu.Unlock()
	switch {
	case ended == nil:
		return c.base.Err()
	case errors.Is(ended, errTimeout):
		return context.DeadlineExceeded
	default:
		return context.Canceled
	}
}

// Value implements context.Context.
func (c *callContext) Value(key any) any {
	if s := c.std.Load(); s != nil {
		return s.cx.Value(key)
	}
	return c.base.Value(key)
}

// standard returns the standard context, making it on first use (ended at once when the
// call already has).
func (c *callContext) standard() context.Context {
	if s := c.std.Load(); s != nil {
		return s.cx
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.std.Load(); s != nil {
		return s.cx
	}
	cx, cancel := context.WithCancelCause(c.base)
	if c.ended != nil {
		cancel(c.ended)
	}
	c.std.Store(&stdContext{cx: cx, cancel: cancel})
	return cx
}

// end ends the call's context with cause; the first cause wins.
func (c *callContext) end(cause error) {
	c.mu.Lock()
	s := c.std.Load()
	if s == nil && c.ended == nil {
		c.ended = cause
	}
	c.mu.Unlock()
	if s != nil {
		s.cancel(cause)
	}
}

// cause returns why the call's context ended, or nil while it has not.
func (c *callContext) cause() error {
	if s := c.std.Load(); s != nil {
		if s.cx.Err() == nil {
			return nil
		}
		return context.Cause(s.cx)
	}
	c.mu.Lock()
	ended := c.ended
	c.mu.Unlock()
	if ended == nil && c.base.Err() != nil {
		return context.Cause(c.base)
	}
	return ended
}
