package ctx

import (
	"context"
	"fmt"
	"sync"
)

// Worker runs a function on demand on a goroutine owned by a scope: [Worker.Kick] asks for
// one more run, kicks that arrive while a run is in progress coalesce into one further run,
// and runs never overlap. It is the shape of a reconcile loop: the function reads the
// desired state when it starts and works towards it, and whoever changes the desired state
// kicks. An idle worker holds no goroutine.
//
// A worker is an effect of the context it was made with. Its disposer (or the unload of
// that context's scope) stops it: later kicks are ignored, the context of a run in progress
// is cancelled, and the disposer waits for that run to return. The runs' context is also
// cancelled as soon as the scope starts unloading; kicks are honoured until the worker is
// disposed, so cleanup registered to run before it may still kick it and wait. Called from
// the worker's own run, with the run's context or one derived from it, the disposer stops
// the worker without waiting: the run in progress is its last.
//
// A Worker is safe for concurrent use. A panic or error of the function is logged; the
// worker goes on. Its loop is the one each scope's transitions run on.
type Worker struct {
	c      *Context
	label  string
	fn     func(context.Context) error
	runCtx context.Context
	cancel context.CancelCauseFunc

	mu  sync.Mutex
	eng engine // guarded by mu
}

// NewWorker makes a worker that runs fn, as an effect of c labelled label. It fails with
// [ErrInactive] when c is unloading or gone.
func (c *Context) NewWorker(label string, fn func(context.Context) error) (*Worker, Disposer, error) {
	stdcx, cancel := context.WithCancelCause(c.std)
	w := &Worker{c: c, label: label, fn: fn, cancel: cancel}
	w.runCtx = context.WithValue(stdcx, workerKey{}, w)
	w.eng = engine{mu: &w.mu, fn: w.run, idle: closedChan}
	d, err := c.Defer("worker:"+label, w.stop)
	if err != nil {
		cancel(err)
		return nil, nil, err
	}
	return w, d, nil
}

// Kick asks for a run that starts after this call, starting one now if none is in
// progress, and returns a channel that is closed once that run has returned, or once the
// worker stopped without running it.
func (w *Worker) Kick() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.eng.kickLocked(true)
}

// run is one run of fn, without w.mu (the engine holds it around runs).
func (w *Worker) run() {
	w.mu.Unlock()
	defer w.mu.Lock()
	if err := Safely(func() error { return w.fn(w.runCtx) }); err != nil {
		w.c.Logger().Error("worker run failed", "worker", w.label, "err", err)
	}
}

// workerKey marks the context of a worker's runs with the worker.
type workerKey struct{}

// stop is the worker's cleanup: no more runs; cancel the one in progress and wait for it
// unless called from it.
func (w *Worker) stop(cx context.Context) error {
	w.mu.Lock()
	w.eng.stopped = true
	idle := w.eng.idle
	w.mu.Unlock()
	w.cancel(ErrScopeUnloaded)
	if cx.Value(workerKey{}) == w {
		return nil
	}
	select {
	case <-idle:
		return nil
	case <-cx.Done():
		return fmt.Errorf("worker %q did not stop: %w", w.label, cx.Err())
	}
}

// engine is the package's one run-on-demand loop, under a [Worker] and under each scope's
// transitions: a kick asks for one more run of fn, kicks that arrive during a run coalesce
// into one further run, runs never overlap, and an idle engine holds no goroutine. Its
// fields are guarded by mu, its owner's lock (a Worker's own; for a scope, the root's, under
// which its transitions are decided). fn is called with mu held and returns with it held;
// it releases it while it runs code that is not its owner's. started and ended, when set,
// run under mu as the engine's goroutine starts and ends.
type engine struct {
	mu             sync.Locker
	fn             func()
	started, ended func()

	running bool
	stopped bool          // no more runs
	pending bool          // a run was asked for since the current one started
	next    chan struct{} // closed once the run serving the pending kicks returns; nil until asked for
	idle    chan struct{} // closed while no run is in progress
}

// kickLocked asks for a run that starts after this call, starting the engine's goroutine
// if it is idle. With wait it returns a channel closed once that run has returned, or once
// the engine stopped without running it (nil without wait). e.mu is held.
func (e *engine) kickLocked(wait bool) <-chan struct{} {
	if e.stopped {
		return closedChan
	}
	e.pending = true
	var ch chan struct{}
	if wait {
		if e.next == nil {
			e.next = make(chan struct{})
		}
		ch = e.next
	}
	if !e.running {
		e.running = true
		e.idle = make(chan struct{})
		if e.started != nil {
			e.started()
		}
		go e.loop()
	}
	return ch
}

// loop runs fn while runs are asked for.
func (e *engine) loop() {
	e.mu.Lock()
	for e.pending && !e.stopped {
		ch := e.next
		e.next, e.pending = nil, false
		e.fn()
		if ch != nil {
			close(ch)
		}
	}
	if e.next != nil { // stopped with kicks pending
		close(e.next)
		e.next = nil
	}
	e.pending = false
	e.running = false
	if e.ended != nil {
		e.ended()
	}
	close(e.idle)
	e.mu.Unlock()
}
