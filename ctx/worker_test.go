package ctx_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
)

// Kicks during a run coalesce into one more run; runs never overlap; Kick's channel closes
// only after a run that started after the kick.
func TestWorkerCoalesces(t *testing.T) {
	root := ctxtest.New(t)
	var runs, inRun atomic.Int32
	entered := make(chan struct{})
	release := make(chan struct{})
	w, _, err := root.NewWorker("w", func(context.Context) error {
		if inRun.Add(1) != 1 {
			t.Error("runs overlap")
		}
		defer inRun.Add(-1)
		if runs.Add(1) == 1 {
			entered <- struct{}{}
			<-release
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	first := w.Kick()
	<-entered // run 1 is in progress
	var later []<-chan struct{}
	for range 5 {
		later = append(later, w.Kick())
	}
	select {
	case <-later[0]:
		t.Fatal("a kick made during run 1 was served by run 1")
	default:
	}
	close(release)
	<-first
	for _, ch := range later {
		<-ch
	}
	if n := runs.Load(); n != 2 {
		t.Fatalf("%d runs, want 2 (the five kicks coalesce)", n)
	}
}

// The disposer cancels a run in progress and waits for it; later kicks are ignored, and the
// scope's unload stops a worker the same way.
func TestWorkerStops(t *testing.T) {
	root := ctxtest.New(t)
	entered := make(chan struct{})
	var returned atomic.Bool
	var runs atomic.Int32
	w, stop, err := root.NewWorker("w", func(cx context.Context) error {
		runs.Add(1)
		entered <- struct{}{}
		<-cx.Done()
		returned.Store(true)
		return context.Cause(cx)
	})
	if err != nil {
		t.Fatal(err)
	}
	pending := w.Kick()
	<-entered
	next := w.Kick() // served by nobody: the worker stops first
	if err := stop(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	if !returned.Load() {
		t.Fatal("the disposer returned before the run")
	}
	<-pending
	<-next
	<-w.Kick()
	if n := runs.Load(); n != 1 {
		t.Fatalf("%d runs after stop, want 1", n)
	}

	// Bound to a plugin: its unload stops the worker.
	var inner *ctx.Worker
	var pc *ctx.Context
	s := ctxtest.MountActive(t, root, ctx.Define(ctx.Meta{Name: "p"}, func(c *ctx.Context, _ struct{}) error {
		var err error
		pc = c
		inner, _, err = c.NewWorker("inner", func(cx context.Context) error {
			entered <- struct{}{}
			<-cx.Done()
			return nil
		})
		return err
	}), nil)
	inner.Kick()
	<-entered
	if err := s.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	<-inner.Kick()
	if _, _, err := pc.NewWorker("late", nil); !errors.Is(err, ctx.ErrInactive) {
		t.Fatal("a worker on a disposed scope")
	}
}

// A run may dispose its own worker: the disposer does not wait for the run, which is the
// last.
func TestWorkerStopsItself(t *testing.T) {
	root := ctxtest.New(t)
	var stop ctx.Disposer
	var runs atomic.Int32
	ready := make(chan struct{})
	w, d, err := root.NewWorker("w", func(cx context.Context) error {
		<-ready
		runs.Add(1)
		return stop(cx)
	})
	if err != nil {
		t.Fatal(err)
	}
	stop = d
	close(ready)
	<-w.Kick()
	<-w.Kick()
	if n := runs.Load(); n != 1 {
		t.Fatalf("%d runs, want 1", n)
	}
}

// A panicking run is logged and the worker goes on.
func TestWorkerPanic(t *testing.T) {
	root, log := ctxtest.NewLogged(t)
	var runs atomic.Int32
	w, _, err := root.NewWorker("w", func(context.Context) error {
		if runs.Add(1) == 1 {
			panic("boom")
		}
		return errors.New("plain failure")
	})
	if err != nil {
		t.Fatal(err)
	}
	<-w.Kick()
	<-w.Kick()
	if runs.Load() != 2 || log.String() == "" {
		t.Fatalf("runs %d, log %q", runs.Load(), log.String())
	}
}

// A reconcile loop: whoever changes the desired state kicks; the worker converges.
func ExampleContext_NewWorker() {
	root := ctx.New(ctx.Options{})
	defer func() { _ = root.Scope().Dispose(context.Background()) }()

	var desired, current atomic.Int32
	w, _, err := root.NewWorker("reconcile", func(context.Context) error {
		for current.Load() < desired.Load() {
			current.Add(1) // one step towards the desired state
		}
		return nil
	})
	if err != nil {
		panic(err)
	}
	desired.Store(3)
	<-w.Kick() // closed once a run that saw desired == 3 has returned
	fmt.Println(current.Load())
	// Output: 3
}
