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
// worker goes on.
type Worker struct {
	c      *Context
	label  string
	fn     func(context.Context) error
	runCtx context.Context
	cancel context.CancelCauseFunc

	mu      sync.Mutex
	running bool
	stopped bool
	next    chan struct{} // closed once the run that serves the pending kicks returns
	idle    chan struct{} // closed while no run is in progress
}

// NewWorker makes a worker that runs fn, as an effect of c labelled label. It fails with
// [ErrInactive] when c is unloading or gone.
func (c *Context) NewWorker(label string, fn func(context.Context) error) (*Worker, Disposer, error) {
	std, cancel := context.WithCancelCause(c.std)
	w := &Worker{c: c, label: label, fn: fn, cancel: cancel, idle: closedChan}
	w.runCtx = context.WithValue(std, workerKey{}, w)
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
	if w.stopped {
		return closedChan
	}
	if w.next == nil {
		w.next = make(chan struct{})
	}
	ch := w.next
	if !w.running {
		w.running = true
		w.idle = make(chan struct{})
		go w.loop()
	}
	return ch
}

// loop runs fn while kicks are pending.
func (w *Worker) loop() {
	for {
		w.mu.Lock()
		ch := w.next
		w.next = nil
		if ch == nil || w.stopped {
			if ch != nil {
				close(ch)
			}
			w.running = false
			close(w.idle)
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		if err := safeCall(func() error { return w.fn(w.runCtx) }); err != nil {
			w.c.Logger().Error("worker run failed", "worker", w.label, "err", err)
		}
		close(ch)
	}
}

// workerKey marks the context of a worker's runs with the worker.
type workerKey struct{}

// stop is the worker's cleanup: no more runs; cancel the one in progress and wait for it
// unless called from it.
func (w *Worker) stop(ctx context.Context) error {
	w.mu.Lock()
	w.stopped = true
	idle := w.idle
	w.mu.Unlock()
	w.cancel(ErrScopeUnloaded)
	if ctx.Value(workerKey{}) == w {
		return nil
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("worker %q did not stop: %w", w.label, ctx.Err())
	}
}
