package ctx_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
)

var (
	quxKey = ctx.NewKey[string]("qux")
	barKey = ctx.NewKey[string]("bar")
)

func provider(name string, k ctx.Key[string], v string, inject ...ctx.Dependency) ctx.PluginDef {
	return ctx.Define(ctx.Meta{Name: name, Inject: inject}, func(c *ctx.Context, _ struct{}) error {
		_, err := k.Provide(c, v)
		return err
	})
}

// A consumer stays pending while its provider is still loading, and starts after.
func TestPendingInject(t *testing.T) {
	root := ctxtest.New(t)
	release := make(chan struct{})
	loading := make(chan struct{})
	slowProvider := ctx.Define(ctx.Meta{Name: "slow"}, func(c *ctx.Context, _ struct{}) error {
		if _, err := fooKey.Provide(c, "ready"); err != nil {
			return err
		}
		close(loading)
		select { // the provider's init is still running
		case <-release:
		case <-c.Done():
		}
		return nil
	})
	var saw atomic.Value
	consumer := ctx.Define(ctx.Meta{Name: "consumer", Inject: []ctx.Dependency{fooKey}}, func(c *ctx.Context, _ struct{}) error {
		saw.Store(fooKey.Use(c))
		return nil
	})
	cs := ctxtest.Mount(t, root, consumer, nil)
	ps := ctxtest.Mount(t, root, slowProvider, nil)
	<-loading
	if err := cs.Wait(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	ctxtest.RequireState(t, cs, ctx.Pending)
	if ps.State() != ctx.Loading {
		t.Fatalf("provider %v", ps.State())
	}
	close(release)
	ctxtest.Settle(t, root)
	ctxtest.RequireState(t, cs, ctx.Active)
	if saw.Load() != "ready" {
		t.Fatalf("consumer saw %v", saw.Load())
	}
}

// Services loaded in the "wrong" order still start each consumer exactly once.
func TestMultipleInjects(t *testing.T) {
	root := ctxtest.New(t)
	var fooInits, barInits, quxInits atomic.Int32
	count := func(n *atomic.Int32, k ctx.Key[string], inject ...ctx.Dependency) ctx.PluginDef {
		return ctx.Define(ctx.Meta{Name: k.Name(), Inject: inject}, func(c *ctx.Context, _ struct{}) error {
			n.Add(1)
			_, err := k.Provide(c, k.Name())
			return err
		})
	}
	ctxtest.Mount(t, root, count(&barInits, barKey, fooKey, quxKey), nil)
	ctxtest.Mount(t, root, count(&fooInits, fooKey, quxKey), nil)
	ctxtest.Mount(t, root, count(&quxInits, quxKey), nil)
	ctxtest.Settle(t, root)
	if fooInits.Load() != 1 || barInits.Load() != 1 || quxInits.Load() != 1 {
		t.Fatalf("inits foo %d bar %d qux %d", fooInits.Load(), barInits.Load(), quxInits.Load())
	}
}

// Replacing a provider with a different scope restarts dependents; a dependent unloads when
// its service disappears and reloads when it comes back.
func TestProviderReplacementRestarts(t *testing.T) {
	root := ctxtest.New(t)
	var loads atomic.Int32
	var last atomic.Value
	consumer := ctx.Define(ctx.Meta{Name: "consumer", Inject: []ctx.Dependency{fooKey}}, func(c *ctx.Context, _ struct{}) error {
		loads.Add(1)
		last.Store(fooKey.Use(c))
		return nil
	})
	cs := ctxtest.Mount(t, root, consumer, nil)
	p1 := ctxtest.MountActive(t, root, provider("p1", fooKey, "one"), nil)
	ctxtest.RequireState(t, cs, ctx.Active)
	if err := p1.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	ctxtest.RequireState(t, cs, ctx.Pending)
	ctxtest.MountActive(t, root, provider("p2", fooKey, "two"), nil)
	ctxtest.RequireState(t, cs, ctx.Active)
	if loads.Load() != 2 || last.Load() != "two" {
		t.Fatalf("loads %d last %v", loads.Load(), last.Load())
	}
}

func TestUseRequiresInject(t *testing.T) {
	root := ctxtest.New(t)
	ctxtest.MountActive(t, root, provider("p", fooKey, "v"), nil)
	sneaky := ctx.Define(ctx.Meta{Name: "sneaky"}, func(c *ctx.Context, _ struct{}) error {
		_ = fooKey.Use(c)
		return nil
	})
	s := ctxtest.Mount(t, root, sneaky, nil)
	ctxtest.Settle(t, root)
	ctxtest.RequireState(t, s, ctx.Failed)
	err := s.Err()
	var pe *ctx.PanicError
	if !errors.As(err, &pe) || !errors.Is(err, ctx.ErrNotInjected) || !strings.Contains(err.Error(), `"foo"`) || !strings.Contains(err.Error(), `"sneaky"`) {
		t.Fatalf("error %v must name the service and the scope", err)
	}
	// Get works without inject, and is non-reactive.
	getter := ctx.Define(ctx.Meta{Name: "getter"}, func(c *ctx.Context, _ struct{}) error {
		if v, ok := fooKey.Get(c); !ok || v != "v" {
			return errors.New("Get should find an active provider")
		}
		if _, ok := barKey.Get(c); ok {
			return errors.New("Get found a service nobody provides")
		}
		return nil
	})
	ctxtest.MountActive(t, root, getter, nil)
}

// Root-provided services are visible everywhere without inject; a scope sees its own and
// its ancestors' services, never a child's.
func TestServiceVisibility(t *testing.T) {
	root := ctxtest.New(t)
	if _, err := quxKey.Provide(root, "root-qux"); err != nil {
		t.Fatal(err)
	}
	results := make(chan string, 4)
	child := ctx.Define(ctx.Meta{Name: "child"}, func(c *ctx.Context, _ struct{}) error {
		results <- quxKey.Use(c) + "," + fooKey.Use(c)
		_, err := barKey.Provide(c, "child-bar")
		return err
	})
	parent := ctx.Define(ctx.Meta{Name: "parent"}, func(c *ctx.Context, _ struct{}) error {
		if _, err := fooKey.Provide(c, "parent-foo"); err != nil {
			return err
		}
		s, err := c.Plugin(child, nil)
		if err != nil {
			return err
		}
		_, _ = c.Go("check", func(gcx context.Context) error {
			if err := s.Wait(gcx); err != nil {
				return err
			}
			_, err := c.Inject("probe", nil, func(pc *ctx.Context) error {
				defer func() { results <- "parent-sees-child:" + boolString(recover() == nil) }()
				_ = barKey.Use(pc)
				return nil
			})
			return err
		})
		return nil
	})
	ctxtest.MountActive(t, root, parent, nil)
	ctxtest.Settle(t, root)
	if got := <-results; got != "root-qux,parent-foo" {
		t.Fatalf("child saw %q", got)
	}
	if got := <-results; got != "parent-sees-child:false" {
		t.Fatalf("parent must not see a child's service: %q", got)
	}
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func TestDuplicateProvide(t *testing.T) {
	root := ctxtest.New(t)
	ctxtest.MountActive(t, root, provider("first", fooKey, "a"), nil)
	s := ctxtest.Mount(t, root, provider("second", fooKey, "b"), nil)
	ctxtest.Settle(t, root)
	ctxtest.RequireState(t, s, ctx.Failed)
	if err := s.Err(); !errors.Is(err, ctx.ErrDuplicateService) || !strings.Contains(err.Error(), `"first"`) {
		t.Fatalf("error %v must name the first provider", err)
	}
}

// Reading a service through the context of an unloaded activation fails.
func TestServiceInjectLeak(t *testing.T) {
	root := ctxtest.New(t)
	ctxtest.MountActive(t, root, provider("p", fooKey, "v"), nil)
	var old *ctx.Context
	consumer := ctx.Define(ctx.Meta{Name: "consumer", Inject: []ctx.Dependency{fooKey}}, func(c *ctx.Context, _ struct{}) error {
		old = c
		return nil
	})
	s := ctxtest.MountActive(t, root, consumer, nil)
	if err := s.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	defer func() {
		err, _ := recover().(error)
		if !errors.Is(err, ctx.ErrInactive) {
			t.Fatalf("use through a stale context: %v", err)
		}
	}()
	fooKey.Use(old)
}

// A service method that registers on the caller's context ties the registration to the
// caller's lifetime: the Go form of Cordis's traceable effects.
type counter struct{ n atomic.Int32 }

func (k *counter) Increase(caller *ctx.Context) error {
	_, err := caller.Defer("counter", func(context.Context) error { k.n.Add(-1); return nil })
	if err == nil {
		k.n.Add(1)
	}
	return err
}

var counterKey = ctx.NewKey[*counter]("counter")

func TestTraceableEffect(t *testing.T) {
	root := ctxtest.New(t)
	k := &counter{}
	if _, err := counterKey.Provide(root, k); err != nil {
		t.Fatal(err)
	}
	user := ctx.Define(ctx.Meta{Name: "user", Inject: []ctx.Dependency{counterKey}}, func(c *ctx.Context, _ struct{}) error {
		return counterKey.Use(c).Increase(c)
	})
	a := ctxtest.MountActive(t, root, user, nil)
	ctxtest.MountActive(t, root, user, nil)
	if k.n.Load() != 2 {
		t.Fatalf("count %d", k.n.Load())
	}
	if err := a.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	if k.n.Load() != 1 {
		t.Fatalf("count %d after one user left, want 1", k.n.Load())
	}
}
