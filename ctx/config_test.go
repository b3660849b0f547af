package ctx_test

import (
	"errors"
	"fmt"
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
		{"unknown key", map[string]any{"greting": "hi"}, `plugin "greeter": key "greting": unknown key`},
		{"wrong type", map[string]any{"times": "three"}, `plugin "greeter": key "times": expected an integer, got string`},
		{"wrong type string", map[string]any{"greeting": 5}, `key "greeting": expected a string, got number`},
		{"validate", map[string]any{"times": -1}, `plugin "greeter": invalid config: times must not be negative`},
		{"not an object", []any{1}, `expected an object`},
		{"json bytes", []byte(`{"bogus": 1}`), `key "bogus": unknown key`},
		{"key case", map[string]any{"Greeting": "hi"}, `key "Greeting": unknown key (did you mean "greeting"?)`},
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
	if err == nil || err.Error() != `plugin "server": key "port": expected a non-negative port` {
		t.Fatalf("error %v", err)
	}
}

type twoKeys struct {
	Name  string         `json:"name"`
	Count int            `json:"count"`
	Tags  []string       `json:"tags"`
	Sub   map[string]int `json:"sub"`
}

func (t twoKeys) Validate() error {
	var p ctx.Problems
	if t.Count < 0 {
		p.Add("count", "must not be negative, got %d", t.Count)
	}
	if t.Name == "" {
		p.Add("name", "required")
	}
	return p.Err()
}

var _ ctx.Validator = twoKeys{}

// Every decoding problem is reported at once, in key order, each a *ConfigError naming its
// key path; Validate problems are reported in the order Validate found them.
func TestDecodeReportsAllProblems(t *testing.T) {
	_, err := ctx.Decode[twoKeys](map[string]any{
		"Name": "x", "count": "many", "tags": []any{"a", 3}, "sub": map[string]any{"k": true}, "extra": 1,
	})
	list := ctx.ConfigErrors(err)
	want := []string{
		`key "Name": unknown key (did you mean "name"?)`,
		`key "count": expected an integer, got string`,
		`key "extra": unknown key: expected one of count, name, sub, tags`,
		`key "sub.k": expected an integer, got boolean`,
		`key "tags[1]": expected a string, got number`,
	}
	if len(list) != len(want) {
		t.Fatalf("%d problems, want %d:\n%v", len(list), len(want), err)
	}
	for i, w := range want {
		if list[i].Error() != w || !errors.Is(list[i], ctx.ErrInvalidConfig) {
			t.Errorf("problem %d = %q, want %q", i, list[i].Error(), w)
		}
	}
	_, err = ctx.Decode[twoKeys](map[string]any{"count": -1})
	if got := err.Error(); got != "key \"count\": must not be negative, got -1\nkey \"name\": required" {
		t.Errorf("validate problems: %q", got)
	}
	placed := ctx.PlaceConfigErrors(err, `settings file "s.yaml"`, "s.yaml", "", "servers.x", func(k string) int {
		return map[string]int{"servers.x.name": 3, "servers.x.count": 7}[k]
	})
	if got := placed.Error(); got != "settings file \"s.yaml\": line 3: key \"servers.x.name\": required\nsettings file \"s.yaml\": line 7: key \"servers.x.count\": must not be negative, got -1" {
		t.Errorf("placed: %q", got)
	}
}

// The typed accessors: Def.Config reads a scope's configuration as C, OnConfigUpdate
// receives updates as C and refuses a hook of another type.
func TestTypedConfigAccessors(t *testing.T) {
	root := ctxtest.New(t)
	var got atomic.Value
	def := ctx.Define(ctx.Meta{Name: "greeter"}, func(c *ctx.Context, cfg greetConfig) error {
		if err := ctx.OnConfigUpdate(c, func(n twoKeys) bool { return true }); err == nil {
			return errors.New("a hook of another configuration type was accepted")
		}
		return ctx.OnConfigUpdate(c, func(n greetConfig) bool { got.Store(n.Greeting); return true })
	})
	s := ctxtest.MountActive(t, root, def, map[string]any{"greeting": "a"})
	if cfg, ok := def.Config(s); !ok || cfg.Greeting != "a" {
		t.Fatalf("Config = %+v %v", cfg, ok)
	}
	if err := s.Update(map[string]any{"greeting": "b"}); err != nil {
		t.Fatal(err)
	}
	if got.Load() != "b" {
		t.Fatalf("hook got %v", got.Load())
	}
	if cfg, _ := def.Config(s); cfg.Greeting != "b" {
		t.Fatalf("Config after update = %+v", cfg)
	}
	other := ctx.Define(ctx.Meta{Name: "other"}, func(*ctx.Context, greetConfig) error { return nil })
	if _, ok := other.Config(s); ok {
		t.Fatal("Config of another definition's scope")
	}
}

// ConfigErrors finds every problem, also below a wrapping error, and words anything else
// as one problem.
func TestConfigErrorsFlattens(t *testing.T) {
	var p ctx.Problems
	p.Add("a", "first")
	p.Add("b", "second")
	wrapped := fmt.Errorf("mcp server %q: %w", "x", p.Err())
	if list := ctx.ConfigErrors(wrapped); len(list) != 2 || list[0].Key != "a" || list[1].Key != "b" {
		t.Fatalf("wrapped join: %+v", list)
	}
	plain := errors.New("boom")
	if list := ctx.ConfigErrors(fmt.Errorf("ctx: %w", plain)); len(list) != 1 || list[0].Msg != "ctx: boom" || !errors.Is(list[0], plain) {
		t.Fatalf("plain: %+v", list)
	}
	if ctx.ConfigErrors(nil) != nil {
		t.Fatal("nil")
	}
}
