package ctx_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
)

// order records cleanup order across goroutines.
type order struct {
	mu  sync.Mutex
	ids []int
}

func (o *order) add(i int) func(context.Context) error {
	return func(context.Context) error {
		o.mu.Lock()
		o.ids = append(o.ids, i)
		o.mu.Unlock()
		return nil
	}
}

func (o *order) get() []int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.ids)
}

func TestDisposeByPlugin(t *testing.T) {
	root := ctxtest.New(t)
	var o order
	def := ctx.Define(ctx.Meta{Name: "p"}, func(c *ctx.Context, _ struct{}) error {
		_, err := c.Defer("my-effect", o.add(1))
		return err
	})
	s := ctxtest.MountActive(t, root, def, nil)
	if es := s.Effects(); len(es) != 1 || es[0].Label != "my-effect" {
		t.Fatalf("effects %v", es)
	}
	for range 2 {
		if err := s.Dispose(ctxtest.Wait(t)); err != nil {
			t.Fatal(err)
		}
	}
	if got := o.get(); !slices.Equal(got, []int{1}) {
		t.Fatalf("cleanups %v", got)
	}
}

func TestDisposeManually(t *testing.T) {
	root := ctxtest.New(t)
	var o order
	d, err := root.Effect("", func(e *ctx.Effect) error { e.Defer(o.add(1)); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if es := root.Scope().Effects(); len(es) != 1 || es[0].Label != "anonymous" {
		t.Fatalf("effects %v", es)
	}
	for range 2 {
		if err := d(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if got := o.get(); !slices.Equal(got, []int{1}) {
		t.Fatalf("cleanups %v", got)
	}
	if len(root.Scope().Effects()) != 0 {
		t.Fatal("disposed effect still listed")
	}
}

func TestEffectNestingAndLIFO(t *testing.T) {
	root := ctxtest.New(t)
	var o order
	d, err := root.Effect("outer", func(e *ctx.Effect) error {
		e.Defer(o.add(1))
		if _, err := ping.On(e.Context(), func(string) error { return nil }); err != nil {
			return err
		}
		if _, err := e.Context().Effect("inner", func(e2 *ctx.Effect) error { e2.Defer(o.add(2)); return nil }); err != nil {
			return err
		}
		e.Defer(o.add(3))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	es := root.Scope().Effects()
	if len(es) != 1 || len(es[0].Children) != 4 || es[0].Children[1].Label != "on:test/ping" || es[0].Children[2].Label != "inner" {
		t.Fatalf("effect tree %+v", es)
	}
	if err := d(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := o.get(); !slices.Equal(got, []int{3, 2, 1}) {
		t.Fatalf("cleanup order %v, want [3 2 1]", got)
	}
}

func TestEffectSetupError(t *testing.T) {
	root := ctxtest.New(t)
	var o order
	boom := errors.New("boom")
	_, err := root.Effect("e", func(e *ctx.Effect) error { return boom })
	if !errors.Is(err, boom) || len(o.get()) != 0 {
		t.Fatalf("return with error: %v %v", err, o.get())
	}
	_, err = root.Effect("e", func(e *ctx.Effect) error {
		e.Defer(o.add(1))
		return boom
	})
	if !errors.Is(err, boom) || !slices.Equal(o.get(), []int{1}) {
		t.Fatalf("defer then error: %v, cleanups %v", err, o.get())
	}
	_, err = root.Effect("e", func(e *ctx.Effect) error {
		e.Defer(o.add(2))
		panic("kaboom")
	})
	var pe *ctx.PanicError
	if !errors.As(err, &pe) || !slices.Equal(o.get(), []int{1, 2}) {
		t.Fatalf("panic in setup: %v, cleanups %v", err, o.get())
	}
	if len(root.Scope().Effects()) != 0 {
		t.Fatal("failed effects must not stay registered")
	}
}

// An unload that starts while an effect's setup runs (on another goroutine) cancels the
// effect's context, waits for setup, then runs what it collected: Cordis "async yield
// (aborted)".
func TestEffectAbortedSetup(t *testing.T) {
	root := ctxtest.New(t)
	var o order
	inSetup := make(chan struct{})
	setupDone := make(chan error, 1)
	def := ctx.Define(ctx.Meta{Name: "p"}, func(c *ctx.Context, _ struct{}) error {
		go func() {
			_, err := c.Effect("slow", func(e *ctx.Effect) error {
				e.Defer(o.add(1))
				close(inSetup)
				<-e.Context().Done()
				e.Defer(o.add(2))
				return nil
			})
			setupDone <- err
		}()
		return nil
	})
	s := ctxtest.MountActive(t, root, def, nil)
	<-inSetup
	if err := s.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	if err := <-setupDone; err != nil {
		t.Fatalf("setup: %v", err)
	}
	if got := o.get(); !slices.Equal(got, []int{2, 1}) {
		t.Fatalf("cleanups %v, want [2 1]", got)
	}
}

func TestDisposerErrorsJoinedAndAllRun(t *testing.T) {
	root, log := ctxtest.NewLogged(t)
	var o order
	e1, e2 := errors.New("first"), errors.New("second")
	def := ctx.Define(ctx.Meta{Name: "p"}, func(c *ctx.Context, _ struct{}) error {
		_, _ = c.Defer("a", o.add(1))
		_, _ = c.Defer("b", func(context.Context) error { return e1 })
		_, _ = c.Defer("c", func(context.Context) error { panic(e2) })
		_, _ = c.Defer("d", o.add(4))
		return nil
	})
	s := ctxtest.MountActive(t, root, def, nil)
	err := s.Dispose(ctxtest.Wait(t))
	if !errors.Is(err, e1) || !errors.Is(err, e2) {
		t.Fatalf("dispose error %v, want both joined", err)
	}
	if got := o.get(); !slices.Equal(got, []int{4, 1}) {
		t.Fatalf("cleanups %v", got)
	}
	if n := len(log.Records(8)); n != 1 {
		t.Fatalf("%d error records, want 1:\n%s", n, log.String())
	}
	ctxtest.RequireState(t, s, ctx.Disposed)
}

func TestGoIsCancelledAndJoined(t *testing.T) {
	root := ctxtest.New(t)
	stopped := make(chan struct{})
	started := make(chan struct{})
	def := ctx.Define(ctx.Meta{Name: "p"}, func(c *ctx.Context, _ struct{}) error {
		_, err := c.Go("worker", func(gcx context.Context) error {
			close(started)
			<-gcx.Done()
			close(stopped)
			return gcx.Err()
		})
		return err
	})
	s := ctxtest.MountActive(t, root, def, nil)
	<-started
	if err := s.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stopped:
	default:
		t.Fatal("Dispose returned before the goroutine stopped")
	}
}

// TestGoLeavesEffectsWhenDone: a goroutine that returns on its own leaves the scope's
// effects, and its disposer still answers.
func TestGoLeavesEffectsWhenDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := ctxtest.New(t)
		dispose, err := root.Go("short", func(context.Context) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the goroutine has returned
		if es := root.Scope().Effects(); len(es) != 0 {
			t.Fatalf("effects after the goroutine returned: %v", es)
		}
		if err := dispose(ctxtest.Wait(t)); err != nil {
			t.Fatal(err)
		}
	})
}

func TestActivationContextEnds(t *testing.T) {
	root := ctxtest.New(t)
	var got *ctx.Context
	def := ctx.Define(ctx.Meta{Name: "p"}, func(c *ctx.Context, _ struct{}) error { got = c; return nil })
	s := ctxtest.MountActive(t, root, def, nil)
	first := got
	if first.Err() != nil {
		t.Fatal("active context already done")
	}
	if err := s.Restart(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	if first.Err() == nil || !errors.Is(context.Cause(first), ctx.ErrScopeUnloaded) {
		t.Fatalf("old activation not ended: %v", context.Cause(first))
	}
	if got == first || got.Err() != nil {
		t.Fatal("restart must hand apply a fresh context")
	}
	if _, err := first.Defer("stale", func(context.Context) error { return nil }); !errors.Is(err, ctx.ErrInactive) {
		t.Fatalf("effect on stale context: %v", err)
	}
}
