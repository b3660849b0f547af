package ctx_test

import (
	"sync/atomic"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
)

func TestIsolatedContext(t *testing.T) {
	root := ctxtest.New(t)
	var loads atomic.Int32
	consumer := ctx.Define(ctx.Meta{Name: "consumer", Inject: []ctx.Dependency{fooKey}}, func(c *ctx.Context, _ struct{}) error {
		loads.Add(1)
		return nil
	})
	a := root.Isolate("foo", "")
	b := root.Isolate("foo", "")
	inRoot := ctxtest.Mount(t, root, consumer, nil)
	inA := ctxtest.Mount(t, a, consumer, nil)
	inB := ctxtest.Mount(t, b, consumer, nil)
	withdrawRoot, err := fooKey.Provide(root, "root")
	if err != nil {
		t.Fatal(err)
	}
	ctxtest.Settle(t, root)
	ctxtest.RequireState(t, inRoot, ctx.Active)
	ctxtest.RequireState(t, inA, ctx.Pending)
	ctxtest.RequireState(t, inB, ctx.Pending)
	if _, err := fooKey.Provide(a, "a"); err != nil {
		t.Fatalf("the same name in another realm is fine: %v", err)
	}
	ctxtest.Settle(t, root)
	ctxtest.RequireState(t, inA, ctx.Active)
	ctxtest.RequireState(t, inB, ctx.Pending)
	if v := fooKey.Use(inA.Context()); v != "a" {
		t.Fatalf("realm a sees %q", v)
	}
	if err := withdrawRoot(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	ctxtest.Settle(t, root)
	ctxtest.RequireState(t, inRoot, ctx.Pending)
	ctxtest.RequireState(t, inA, ctx.Active)
	if loads.Load() != 2 {
		t.Fatalf("loads %d", loads.Load())
	}
}

func TestSharedLabel(t *testing.T) {
	root := ctxtest.New(t)
	consumer := ctx.Define(ctx.Meta{Name: "consumer", Inject: []ctx.Dependency{fooKey}}, func(c *ctx.Context, _ struct{}) error { return nil })
	a := ctxtest.Mount(t, root.Isolate("foo", "shared"), consumer, nil)
	b := ctxtest.Mount(t, root.Isolate("foo", "shared"), consumer, nil)
	withdraw, err := fooKey.Provide(root.Isolate("foo", "shared"), "x")
	if err != nil {
		t.Fatal(err)
	}
	ctxtest.Settle(t, root)
	ctxtest.RequireState(t, a, ctx.Active)
	ctxtest.RequireState(t, b, ctx.Active)
	if _, ok := fooKey.Get(root); ok {
		t.Fatal("the default realm must not see the shared realm's service")
	}
	if err := withdraw(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	ctxtest.Settle(t, root)
	ctxtest.RequireState(t, a, ctx.Pending)
	ctxtest.RequireState(t, b, ctx.Pending)
}

// A realm set on an outer context reaches plugins mounted inside, and only the consumer
// whose realm changes is affected when a provider moves between realms.
func TestNestedRealmsAndTransfer(t *testing.T) {
	root := ctxtest.New(t)
	var outerLoads, plainLoads atomic.Int32
	consumer := func(n *atomic.Int32) ctx.PluginDef {
		return ctx.Define(ctx.Meta{Name: "consumer", Inject: []ctx.Dependency{fooKey}}, func(c *ctx.Context, _ struct{}) error {
			n.Add(1)
			return nil
		})
	}
	group := ctx.Define(ctx.Meta{Name: "group"}, func(c *ctx.Context, _ struct{}) error {
		_, err := c.Plugin(consumer(&outerLoads), nil)
		return err
	})
	ctxtest.Mount(t, root.Isolate("foo", "private"), group, nil)
	ctxtest.Mount(t, root, consumer(&plainLoads), nil)
	// The provider starts in the private realm, then moves to the default realm.
	p := ctxtest.MountActive(t, root.Isolate("foo", "private"), provider("p", fooKey, "v"), nil)
	if outerLoads.Load() != 1 || plainLoads.Load() != 0 {
		t.Fatalf("private %d default %d", outerLoads.Load(), plainLoads.Load())
	}
	if err := p.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	ctxtest.MountActive(t, root, provider("p", fooKey, "v"), nil)
	if outerLoads.Load() != 1 || plainLoads.Load() != 1 {
		t.Fatalf("after transfer: private %d default %d", outerLoads.Load(), plainLoads.Load())
	}
}

// A service's events reach only listeners in its realm when the dispatcher targets them.
func TestIsolatedEvent(t *testing.T) {
	root := ctxtest.New(t)
	realmA := root.Isolate("foo", "a")
	var inA, inDefault atomic.Int32
	_, _ = ping.On(realmA, func(string) error { inA.Add(1); return nil })
	_, _ = ping.On(root, func(string) error { inDefault.Add(1); return nil })
	sameRealm := func(src *ctx.Context) ctx.DispatchOption {
		return ctx.Target(func(l *ctx.Context) bool { return ctx.SameRealm(l, src, "foo") })
	}
	_ = ping.Emit(realmA, "x", sameRealm(realmA))
	if inA.Load() != 1 || inDefault.Load() != 0 {
		t.Fatalf("a %d default %d", inA.Load(), inDefault.Load())
	}
}

func TestIntercepts(t *testing.T) {
	root := ctxtest.New(t)
	c := root.Intercept("logger", "outer").Intercept("other", 1).Intercept("logger", "inner")
	got := c.Intercepts("logger")
	if len(got) != 2 || got[0] != "outer" || got[1] != "inner" {
		t.Fatalf("intercepts %v", got)
	}
	seen := make(chan []any, 1)
	def := ctx.Define(ctx.Meta{Name: "p"}, func(pc *ctx.Context, _ struct{}) error { seen <- pc.Intercepts("logger"); return nil })
	ctxtest.MountActive(t, c, def, nil)
	if v := <-seen; len(v) != 2 {
		t.Fatalf("plugin sees %v", v)
	}
}
