package ctx_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
)

var fooKey = ctx.NewKey[string]("foo")

// withdrawAsync runs a service's disposer, which waits for dependents that are still
// loading, on its own goroutine, and returns once the service is gone from the table.
func withdrawAsync(t *testing.T, root *ctx.Context, withdraw ctx.Disposer) <-chan error {
	t.Helper()
	rec := ctxtest.Record(t, root, ctx.ServiceChanged)
	done := make(chan error, 1)
	go func() { done <- withdraw(ctxtest.Wait(t)) }()
	rec.WaitFor(t, func(ev []ctx.ServiceChange) bool {
		return slices.ContainsFunc(ev, func(c ctx.ServiceChange) bool { return !c.Provided })
	})
	return done
}

// A dependency removed while the consumer loads keeps it loading until apply returns; it
// then unloads, and a dependency provided again during that unload makes it load again.
func TestInertiaLock1(t *testing.T) {
	root := ctxtest.New(t)
	release := make(chan struct{})
	holdUnload := make(chan struct{})
	inApply := make(chan struct{}, 2)
	inUnload := make(chan struct{}, 2)
	var loads atomic.Int32
	consumer := ctx.Define(ctx.Meta{Name: "consumer", Inject: []ctx.Dependency{fooKey}}, func(c *ctx.Context, _ struct{}) error {
		if loads.Add(1) == 1 {
			inApply <- struct{}{}
			<-release
			_, err := c.Defer("slow-cleanup", func(context.Context) error {
				inUnload <- struct{}{}
				<-holdUnload
				return nil
			})
			return err
		}
		return nil
	})
	s := ctxtest.Mount(t, root, consumer, nil)
	states := ctxtest.Transitions(t, root, s)
	withdraw, err := fooKey.Provide(root, "v1")
	if err != nil {
		t.Fatal(err)
	}
	<-inApply
	withdrawn := withdrawAsync(t, root, withdraw)
	ctxtest.RequireState(t, s, ctx.Loading)
	close(release)
	<-inUnload
	ctxtest.RequireState(t, s, ctx.Unloading)
	if _, err := fooKey.Provide(root, "v2"); err != nil {
		t.Fatal(err)
	}
	close(holdUnload)
	if err := <-withdrawn; err != nil {
		t.Fatal(err)
	}
	ctxtest.Settle(t, root)
	ctxtest.RequireState(t, s, ctx.Active)
	want := []ctx.State{ctx.Loading, ctx.Unloading, ctx.Loading, ctx.Active}
	if got := states.States(); !slices.Equal(got, want) {
		t.Fatalf("transitions %v, want %v", got, want)
	}
	if fooKey.Use(s.Context()) != "v2" {
		t.Fatal("reloaded against the new value")
	}
}

// A dependency removed and provided again by the same provider while the consumer loads
// leaves the consumer active without an unload; it sees the new value.
func TestInertiaLock2(t *testing.T) {
	root := ctxtest.New(t)
	release := make(chan struct{})
	inApply := make(chan struct{})
	consumer := ctx.Define(ctx.Meta{Name: "consumer", Inject: []ctx.Dependency{fooKey}}, func(c *ctx.Context, _ struct{}) error {
		close(inApply)
		<-release
		return nil
	})
	s := ctxtest.Mount(t, root, consumer, nil)
	states := ctxtest.Transitions(t, root, s)
	withdraw, _ := fooKey.Provide(root, "v1")
	<-inApply
	withdrawn := withdrawAsync(t, root, withdraw)
	if _, err := fooKey.Provide(root, "v2"); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-withdrawn; err != nil {
		t.Fatal(err)
	}
	ctxtest.Settle(t, root)
	if got, want := states.States(), []ctx.State{ctx.Loading, ctx.Active}; !slices.Equal(got, want) {
		t.Fatalf("transitions %v, want %v", got, want)
	}
	if v := fooKey.Use(s.Context()); v != "v2" {
		t.Fatalf("consumer sees %q, want the re-provided value", v)
	}
}

// Disposing a provider scope unloads its consumer to pending, and the consumer's cleanup
// has finished when the provider's Dispose returns.
func TestInertiaLock3(t *testing.T) {
	root := ctxtest.New(t)
	provider := ctx.Define(ctx.Meta{Name: "provider"}, func(c *ctx.Context, _ struct{}) error {
		_, err := fooKey.Provide(c, "svc")
		return err
	})
	var cleaned atomic.Bool
	consumer := ctx.Define(ctx.Meta{Name: "consumer", Inject: []ctx.Dependency{fooKey}}, func(c *ctx.Context, _ struct{}) error {
		_, err := c.Defer("cleanup", func(context.Context) error { cleaned.Store(true); return nil })
		return err
	})
	cs := ctxtest.Mount(t, root, consumer, nil)
	ctxtest.Settle(t, root)
	ctxtest.RequireState(t, cs, ctx.Pending)
	states := ctxtest.Transitions(t, root, cs)
	ps := ctxtest.MountActive(t, root, provider, nil)
	ctxtest.RequireState(t, cs, ctx.Active)
	if err := ps.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	if !cleaned.Load() {
		t.Fatal("provider's dispose returned before the consumer's cleanup")
	}
	ctxtest.RequireState(t, cs, ctx.Pending)
	want := []ctx.State{ctx.Loading, ctx.Active, ctx.Unloading, ctx.Pending}
	if got := states.States(); !slices.Equal(got, want) {
		t.Fatalf("transitions %v, want %v", got, want)
	}
}

func TestPluginError(t *testing.T) {
	root, log := ctxtest.NewLogged(t)
	var calls atomic.Int32
	def := ctx.Define(ctx.Meta{Name: "flaky"}, func(c *ctx.Context, cfg greetConfig) error {
		if _, err := ping.On(c, func(string) error { calls.Add(1); return nil }); err != nil {
			return err
		}
		if cfg.Greeting == "fail" {
			return errors.New("refusing to greet")
		}
		return nil
	})
	bad := ctxtest.Mount(t, root, def, map[string]any{"greeting": "fail"})
	good := ctxtest.Mount(t, root, def, map[string]any{"greeting": "ok"})
	ctxtest.Settle(t, root)
	ctxtest.RequireState(t, bad, ctx.Failed)
	ctxtest.RequireState(t, good, ctx.Active)
	if err := bad.Wait(ctxtest.Wait(t)); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Fatalf("Wait on failed scope: %v", err)
	}
	_ = ping.Emit(root, "x")
	if calls.Load() != 1 {
		t.Fatalf("%d listeners, want only the healthy scope's", calls.Load())
	}
	if n := len(log.Records(8)); n != 1 {
		t.Fatalf("%d error records, want 1", n)
	}
}

func TestPanicInApplyFails(t *testing.T) {
	root := ctxtest.New(t)
	def := ctx.Define(ctx.Meta{Name: "panicky"}, func(c *ctx.Context, _ struct{}) error { panic("oops") })
	s := ctxtest.Mount(t, root, def, nil)
	ctxtest.Settle(t, root)
	ctxtest.RequireState(t, s, ctx.Failed)
	var pe *ctx.PanicError
	if !errors.As(s.Err(), &pe) || pe.Value != "oops" {
		t.Fatalf("err %v", s.Err())
	}
}

// A failed scope is retried when a dependency changes, and by Restart.
func TestFailedRetried(t *testing.T) {
	root := ctxtest.New(t)
	var attempts atomic.Int32
	def := ctx.Define(ctx.Meta{Name: "needs-foo", Inject: []ctx.Dependency{fooKey}}, func(c *ctx.Context, _ struct{}) error {
		if fooKey.Use(c) == "bad" {
			attempts.Add(1)
			return errors.New("bad foo")
		}
		return nil
	})
	s := ctxtest.Mount(t, root, def, nil)
	provider := func(v string) ctx.PluginDef {
		return ctx.Define(ctx.Meta{Name: "p-" + v}, func(c *ctx.Context, _ struct{}) error {
			_, err := fooKey.Provide(c, v)
			return err
		})
	}
	p1 := ctxtest.MountActive(t, root, provider("bad"), nil)
	ctxtest.RequireState(t, s, ctx.Failed)
	if err := s.Restart(ctxtest.Wait(t)); err == nil {
		t.Fatal("restart against the same bad provider must fail again")
	}
	if attempts.Load() != 2 {
		t.Fatalf("attempts %d", attempts.Load())
	}
	if err := p1.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	ctxtest.MountActive(t, root, provider("good"), nil)
	ctxtest.RequireState(t, s, ctx.Active)
	if s.Err() != nil {
		t.Fatalf("stored error not cleared: %v", s.Err())
	}
}

// Disposing a scope whose apply blocks cancels apply's context; the scope ends disposed.
func TestDisposeDuringBlockingApply(t *testing.T) {
	root, log := ctxtest.NewLogged(t)
	inApply := make(chan struct{})
	def := ctx.Define(ctx.Meta{Name: "blocker"}, func(c *ctx.Context, _ struct{}) error {
		close(inApply)
		<-c.Done()
		return context.Cause(c)
	})
	s := ctxtest.Mount(t, root, def, nil)
	<-inApply
	if err := s.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	ctxtest.RequireState(t, s, ctx.Disposed)
	if n := len(log.Records(8)); n != 0 {
		t.Fatalf("an aborted load is not a failure; log:\n%s", log.String())
	}
}

// User code may call back into the framework: no framework lock is held while it runs.
func TestNoLockHeldInUserCode(t *testing.T) {
	root := ctxtest.New(t)
	child := ctx.Define(ctx.Meta{Name: "child"}, func(c *ctx.Context, _ struct{}) error { return nil })
	def := ctx.Define(ctx.Meta{Name: "reentrant"}, func(c *ctx.Context, _ struct{}) error {
		_ = c.Scope().State()
		_ = c.Scope().Effects()
		_ = c.Registry().Len()
		s, err := c.Plugin(child, nil)
		if err != nil {
			return err
		}
		if err := s.Wait(c); err != nil {
			return err
		}
		_, err = c.Defer("cleanup", func(dcx context.Context) error {
			_ = c.Scope().State()
			_, _ = fooKey.Get(c)
			return nil
		})
		return err
	})
	if _, err := ctx.StatusChanged.On(root, func(ch ctx.StatusChange) error {
		_ = ch.Scope.State()
		_ = ch.Scope.Err()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s := ctxtest.MountActive(t, root, def, nil)
	if err := s.Restart(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	if err := s.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
}

func TestSelfDisposeFromApply(t *testing.T) {
	root := ctxtest.New(t)
	def := ctx.Define(ctx.Meta{Name: "quitter"}, func(c *ctx.Context, _ struct{}) error {
		return c.Scope().Dispose(c)
	})
	s := ctxtest.Mount(t, root, def, nil)
	ctxtest.Settle(t, root)
	ctxtest.RequireState(t, s, ctx.Disposed)
}

func TestStatusEventsAndLifecycleEvents(t *testing.T) {
	root := ctxtest.New(t)
	created := ctxtest.Record(t, root, ctx.ScopeCreated)
	disposed := ctxtest.Record(t, root, ctx.ScopeDisposed)
	states := ctxtest.Transitions(t, root, nil)
	def := ctx.Define(ctx.Meta{Name: "p"}, func(c *ctx.Context, _ struct{}) error { return nil })
	s := ctxtest.MountActive(t, root, def, nil)
	if err := s.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	if c := created.Events(); len(c) != 1 || c[0] != s {
		t.Fatalf("created %v", c)
	}
	if d := disposed.Events(); len(d) != 1 || d[0] != s {
		t.Fatalf("disposed %v", d)
	}
	want := []ctx.State{ctx.Loading, ctx.Active, ctx.Unloading, ctx.Disposed}
	if got := states.States(); !slices.Equal(got, want) {
		t.Fatalf("transitions %v, want %v", got, want)
	}
}

func TestSettleWaitsForNestedMounts(t *testing.T) {
	root := ctxtest.New(t)
	var leaves atomic.Int32
	var mk func(depth int) ctx.PluginDef
	mk = func(depth int) ctx.PluginDef {
		return ctx.Define(ctx.Meta{Name: "tree"}, func(c *ctx.Context, _ struct{}) error {
			if depth == 0 {
				leaves.Add(1)
				return nil
			}
			for range 3 {
				if _, err := c.Plugin(mk(depth-1), nil); err != nil {
					return err
				}
			}
			return nil
		})
	}
	ctxtest.Mount(t, root, mk(4), nil)
	ctxtest.Settle(t, root)
	if leaves.Load() != 81 {
		t.Fatalf("leaves %d after Settle, want 81", leaves.Load())
	}
}
