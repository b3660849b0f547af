package ctx_test

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
)

func TestConfigDecodeErrors(t *testing.T) {
	def := ctx.Define(ctx.Meta{Name: "greeter"}, func(*ctx.Context, greetConfig) error { return nil })
	cases := []struct {
		name string
		raw  any
		want string
	}{
		{"unknown key", map[string]any{"greting": "hi"}, `plugin "greeter": config key "greting": unknown key`},
		{"wrong type", map[string]any{"times": "three"}, `plugin "greeter": config key "times": expected an integer, got string`},
		{"wrong type string", map[string]any{"greeting": 5}, `config key "greeting": expected a string, got number`},
		{"validate", map[string]any{"times": -1}, `plugin "greeter": invalid config: times must not be negative`},
		{"not an object", []any{1}, `expected an object`},
		{"json bytes", []byte(`{"bogus": 1}`), `config key "bogus": unknown key`},
		{"key case", map[string]any{"Greeting": "hi"}, `config key "Greeting": unknown key (did you mean "greeting"?)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := def.DecodeConfig(tc.raw)
			var ce *ctx.ConfigError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
	cfg, err := def.DecodeConfig(nil)
	if err != nil || cfg.(greetConfig).Times != 1 {
		t.Fatalf("defaults: %+v %v", cfg, err)
	}
}

// An invalid configuration makes the scope fail at activation.
func TestInvalidConfigFailsScope(t *testing.T) {
	root := ctxtest.New(t)
	var applied atomic.Bool
	def := ctx.Define(ctx.Meta{Name: "greeter"}, func(*ctx.Context, greetConfig) error { applied.Store(true); return nil })
	s := ctxtest.Mount(t, root, def, map[string]any{"nope": true})
	ctxtest.Settle(t, root)
	ctxtest.RequireState(t, s, ctx.Failed)
	if applied.Load() {
		t.Fatal("apply ran with an invalid config")
	}
	// A valid update makes it load.
	if err := s.Update(map[string]any{"greeting": "ok"}); err != nil {
		t.Fatal(err)
	}
	ctxtest.Settle(t, root)
	ctxtest.RequireState(t, s, ctx.Active)
}

func TestUpdate(t *testing.T) {
	root := ctxtest.New(t)
	var loads atomic.Int32
	var current atomic.Value
	def := ctx.Define(ctx.Meta{Name: "greeter"}, func(c *ctx.Context, cfg greetConfig) error {
		loads.Add(1)
		current.Store(cfg.Greeting)
		return c.OnUpdate(func(next any) bool {
			n := next.(greetConfig)
			if n.Times != cfg.Times {
				return false // only the greeting can change in place
			}
			current.Store(n.Greeting)
			return true
		})
	})
	s := ctxtest.MountActive(t, root, def, map[string]any{"greeting": "a"})
	if err := s.Update(map[string]any{"greeting": "b"}); err != nil {
		t.Fatal(err)
	}
	ctxtest.Settle(t, root)
	if loads.Load() != 1 || current.Load() != "b" || s.Config().(greetConfig).Greeting != "b" {
		t.Fatalf("hot update: loads %d current %v", loads.Load(), current.Load())
	}
	if err := s.Update(map[string]any{"greeting": "c", "times": 2}); err != nil {
		t.Fatal(err)
	}
	ctxtest.Settle(t, root)
	if loads.Load() != 2 || current.Load() != "c" {
		t.Fatalf("restart update: loads %d current %v", loads.Load(), current.Load())
	}
	// Invalid updates change nothing.
	if err := s.Update(map[string]any{"times": -5}); err == nil {
		t.Fatal("invalid update accepted")
	}
	ctxtest.Settle(t, root)
	if loads.Load() != 2 || s.Config().(greetConfig).Times != 2 {
		t.Fatalf("invalid update changed state: loads %d cfg %+v", loads.Load(), s.Config())
	}
	if err := root.Scope().Update(nil); !errors.Is(err, ctx.ErrRootOnly) {
		t.Fatalf("root update: %v", err)
	}
}

func TestNewConfigAppliesDefaults(t *testing.T) {
	def := ctx.Define(ctx.Meta{Name: "greeter"}, func(*ctx.Context, greetConfig) error { return nil })
	cfg, ok := def.NewConfig().(*greetConfig)
	if !ok || cfg.Times != 1 {
		t.Fatalf("NewConfig() = %#v", def.NewConfig())
	}
}

type keyedConfig struct {
	Port int `json:"port"`
}

func (k keyedConfig) Validate() error {
	if k.Port < 0 {
		return &ctx.ConfigError{Key: "port", Msg: "expected a non-negative port"}
	}
	return nil
}

func TestValidateNamesKey(t *testing.T) {
	def := ctx.Define(ctx.Meta{Name: "server"}, func(*ctx.Context, keyedConfig) error { return nil })
	_, err := def.DecodeConfig(map[string]any{"port": -1})
	if err == nil || err.Error() != `plugin "server": config key "port": expected a non-negative port` {
		t.Fatalf("error %v", err)
	}
}
