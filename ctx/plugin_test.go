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

type greetConfig struct {
	Greeting string `json:"greeting"`
	Times    int    `json:"times"`
}

func (c *greetConfig) Default() { c.Times = 1 }

func (c greetConfig) Validate() error {
	if c.Times < 0 {
		return errors.New("times must not be negative")
	}
	return nil
}

var ping = ctx.NewEvent[string]("test/ping")

func TestApplyFunctionalPlugin(t *testing.T) {
	root := ctxtest.New(t)
	var calls atomic.Int32
	var got greetConfig
	def := ctx.Define(ctx.Meta{Name: "greeter"}, func(c *ctx.Context, cfg greetConfig) error {
		calls.Add(1)
		got = cfg
		return nil
	})
	s := ctxtest.MountActive(t, root, def, map[string]any{"greeting": "hi"})
	if calls.Load() != 1 || got.Greeting != "hi" || got.Times != 1 {
		t.Fatalf("apply called %d times with %+v", calls.Load(), got)
	}
	if s.Name() != "greeter" || s.ID() != 1 || s.Parent() != root.Scope() {
		t.Fatalf("scope identity: %v id %d", s, s.ID())
	}
	if s.Config().(greetConfig).Greeting != "hi" {
		t.Fatalf("Config() = %+v", s.Config())
	}
}

func TestApplyTypedConfig(t *testing.T) {
	root := ctxtest.New(t)
	var got greetConfig
	def := ctx.Define(ctx.Meta{Name: "typed"}, func(c *ctx.Context, cfg greetConfig) error { got = cfg; return nil })
	ctxtest.MountActive(t, root, def, greetConfig{Greeting: "yo", Times: 3})
	if got.Greeting != "yo" || got.Times != 3 {
		t.Fatalf("got %+v", got)
	}
}

func TestApplyInvalidPlugin(t *testing.T) {
	root := ctxtest.New(t)
	if _, err := root.Plugin(nil, nil); !errors.Is(err, ctx.ErrInvalidPlugin) {
		t.Fatalf("mounting nil: %v", err)
	}
}

func TestInactiveContext(t *testing.T) {
	root := ctxtest.New(t)
	var nestedRan atomic.Bool
	nested := ctx.Define(ctx.Meta{Name: "nested"}, func(c *ctx.Context, _ struct{}) error { nestedRan.Store(true); return nil })
	errs := make(chan error, 3)
	def := ctx.Define(ctx.Meta{Name: "outer"}, func(c *ctx.Context, _ struct{}) error {
		_, err := c.Defer("probe", func(context.Context) error {
			_, err1 := c.Plugin(nested, nil)
			_, err2 := c.Defer("late", func(context.Context) error { return nil })
			_, err3 := ping.On(c, func(string) error { return nil })
			errs <- err1
			errs <- err2
			errs <- err3
			return nil
		})
		return err
	})
	s := ctxtest.MountActive(t, root, def, nil)
	if err := s.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := <-errs; !errors.Is(err, ctx.ErrInactive) {
			t.Fatalf("registration during unload: %v, want ErrInactive", err)
		}
	}
	ctxtest.Settle(t, root)
	if nestedRan.Load() {
		t.Fatal("nested plugin ran on an unloading scope")
	}
}

func TestContextName(t *testing.T) {
	root := ctxtest.New(t)
	if root.Scope().Name() != "root" {
		t.Fatalf("root name %q", root.Scope().Name())
	}
	names := make(chan string, 2)
	anon := ctx.Define(ctx.Meta{}, func(c *ctx.Context, _ struct{}) error { names <- c.Scope().Name(); return nil })
	named := ctx.Define(ctx.Meta{Name: "parent"}, func(c *ctx.Context, _ struct{}) error {
		names <- c.Scope().Name()
		_, err := c.Plugin(anon, nil)
		return err
	})
	ctxtest.MountActive(t, root, named, nil)
	ctxtest.Settle(t, root)
	if a, b := <-names, <-names; a != "parent" || b != "parent" {
		t.Fatalf("names %q %q: an anonymous plugin takes its parent's name", a, b)
	}
	ctxtest.Mount(t, root, anon, nil)
	ctxtest.Settle(t, root)
	if n := <-names; n != "root" {
		t.Fatalf("anonymous under root named %q", n)
	}
}

func listenerCount(t *testing.T, root *ctx.Context) int {
	t.Helper()
	n := 0
	var count func([]ctx.EffectInfo)
	count = func(es []ctx.EffectInfo) {
		for _, e := range es {
			if strings.HasPrefix(e.Label, "on:test/ping") {
				n++
			}
			count(e.Children)
		}
	}
	count(root.Scope().Effects())
	return n
}

func TestNestedPlugins(t *testing.T) {
	root := ctxtest.New(t)
	var calls atomic.Int32
	if _, err := ping.On(root, func(string) error { calls.Add(1); return nil }); err != nil {
		t.Fatal(err)
	}
	mk := func(name string, child ctx.PluginDef) ctx.PluginDef {
		return ctx.Define(ctx.Meta{Name: name}, func(c *ctx.Context, _ struct{}) error {
			if _, err := ping.On(c, func(string) error { calls.Add(1); return nil }); err != nil {
				return err
			}
			if child != nil {
				_, err := c.Plugin(child, nil)
				return err
			}
			return nil
		})
	}
	inner := mk("inner", nil)
	middle := mk("middle", inner)
	outer := mk("outer", middle)
	s := ctxtest.Mount(t, root, outer, nil)
	ctxtest.Settle(t, root)
	if err := ping.Emit(root, "x"); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 4 {
		t.Fatalf("4 listeners expected, %d called", calls.Load())
	}
	if n := root.Registry().Len(); n != 3 {
		t.Fatalf("registry has %d plugins, want 3", n)
	}
	if err := s.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	if n := root.Registry().Len(); n != 0 {
		t.Fatalf("registry has %d plugins after dispose, want 0", n)
	}
	calls.Store(0)
	_ = ping.Emit(root, "x")
	if calls.Load() != 1 {
		t.Fatalf("1 listener expected after dispose, %d called", calls.Load())
	}
	if err := s.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatalf("second dispose: %v", err)
	}
	ctxtest.RequireState(t, s, ctx.Disposed)
}

func TestCompareSnapshot(t *testing.T) {
	root := ctxtest.New(t)
	def := ctx.Define(ctx.Meta{Name: "p"}, func(c *ctx.Context, _ struct{}) error {
		_, err := ping.On(c, func(string) error { return nil })
		return err
	})
	before := root.Scope().Effects()
	s := ctxtest.MountActive(t, root, def, nil)
	loaded := listenerCount(t, root)
	if err := s.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	if after := root.Scope().Effects(); !slices.EqualFunc(before, after, func(a, b ctx.EffectInfo) bool { return a.Label == b.Label }) {
		t.Fatalf("effects after dispose %v, before %v", after, before)
	}
	ctxtest.MountActive(t, root, def, nil)
	if again := listenerCount(t, root); again != loaded {
		t.Fatalf("listeners after reload %d, first load %d", again, loaded)
	}
}

func TestRegistryScopes(t *testing.T) {
	root := ctxtest.New(t)
	def := ctx.Define(ctx.Meta{Name: "multi"}, func(c *ctx.Context, _ struct{}) error { return nil })
	a := ctxtest.Mount(t, root, def, nil)
	b := ctxtest.Mount(t, root, def, nil)
	ctxtest.Settle(t, root)
	if got := root.Registry().Scopes(def); !slices.Equal(got, []*ctx.Scope{a, b}) {
		t.Fatalf("scopes %v", got)
	}
	if a.ID() == b.ID() {
		t.Fatal("every mount is an independent scope")
	}
}

func TestRootRestart(t *testing.T) {
	root := ctxtest.New(t)
	var disposed atomic.Int32
	def := ctx.Define(ctx.Meta{Name: "child"}, func(c *ctx.Context, _ struct{}) error {
		_, err := c.Defer("count", func(context.Context) error { disposed.Add(1); return nil })
		return err
	})
	child := ctxtest.MountActive(t, root, def, nil)
	if root.Scope().ID() != 0 || child.ID() != 1 || len(root.Scope().Effects()) != 1 {
		t.Fatalf("ids %d %d, root effects %v", root.Scope().ID(), child.ID(), root.Scope().Effects())
	}
	for range 2 {
		if err := root.Scope().Restart(ctxtest.Wait(t)); err != nil {
			t.Fatal(err)
		}
	}
	if disposed.Load() != 1 || child.State() != ctx.Disposed || len(root.Scope().Effects()) != 0 {
		t.Fatalf("disposed %d, child %v, root effects %v", disposed.Load(), child.State(), root.Scope().Effects())
	}
	ctxtest.RequireState(t, root.Scope(), ctx.Active)
	// The root stays usable.
	ctxtest.MountActive(t, root, def, nil)
}

func TestRootDisposeIsTerminal(t *testing.T) {
	root := ctx.New(ctx.Options{})
	def := ctx.Define(ctx.Meta{Name: "child"}, func(c *ctx.Context, _ struct{}) error { return nil })
	child, _ := root.Plugin(def, nil)
	if err := root.Scope().Dispose(context.Background()); err != nil {
		t.Fatal(err)
	}
	if child.State() != ctx.Disposed || root.Scope().State() != ctx.Disposed {
		t.Fatalf("child %v root %v", child.State(), root.Scope().State())
	}
	if root.Err() == nil || !errors.Is(context.Cause(root), ctx.ErrScopeUnloaded) {
		t.Fatalf("root context not ended: %v", context.Cause(root))
	}
	if _, err := root.Plugin(def, nil); !errors.Is(err, ctx.ErrInactive) {
		t.Fatalf("mount on disposed root: %v", err)
	}
}

// A provider plugin that starts on load and stops on unload: the Go shape of Service.init.
func TestServiceInit(t *testing.T) {
	root := ctxtest.New(t)
	var started, stopped atomic.Int32
	def := ctx.Define(ctx.Meta{Name: "svc"}, func(c *ctx.Context, _ struct{}) error {
		started.Add(1)
		_, err := c.Defer("stop", func(context.Context) error { stopped.Add(1); return nil })
		return err
	})
	s := ctxtest.MountActive(t, root, def, nil)
	if err := s.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	if started.Load() != 1 || stopped.Load() != 1 {
		t.Fatalf("started %d stopped %d", started.Load(), stopped.Load())
	}
}
