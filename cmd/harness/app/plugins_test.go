package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// testPlugins are compiled into the harness under test, next to the
// catalog: they exercise the binary without any MCP server.
var testPlugins = map[string]ctx.PluginDef{
	"testtools":  testTools,
	"teststrict": testStrict,
	"testfail":   testFail,
}

// testStrictConfig has one setting of each common kind, to test how
// configuration errors are reported.
type testStrictConfig struct {
	Count   int               `json:"count"`
	Name    string            `json:"name"`
	Enabled bool              `json:"enabled"`
	Tags    []string          `json:"tags"`
	Limits  map[string]int    `json:"limits"`
	Env     map[string]string `json:"env"`
	Token   string            `json:"token"`
}

func (c testStrictConfig) Validate() error {
	if c.Count < 0 {
		return errors.New("count must not be negative")
	}
	return nil
}

var testStrict = ctx.Define(ctx.Meta{Name: "teststrict"}, func(*ctx.Context, testStrictConfig) error { return nil })

// testFail fails to load.
var testFail = ctx.Define(ctx.Meta{Name: "testfail"}, func(*ctx.Context, struct{}) error {
	return errors.New("this plugin always fails")
})

// testToolsConfig names the tools' prefix.
type testToolsConfig struct {
	Prefix string `json:"prefix"`
}

// testTools registers greet, broken and wait through its own context: they
// land in the layer it is mounted in (ctx.Context.Layer), the root's or an
// agent scope's, and go away when it unloads.
var testTools = ctx.Define(ctx.Meta{Name: "testtools", Inject: []ctx.Dependency{toolregistry.Key}},
	func(c *ctx.Context, cfg testToolsConfig) error {
		reg := toolregistry.Key.Use(c)
		for _, t := range []toolregistry.Tool{{
			Name:        cfg.Prefix + "greet",
			Description: "Greets someone.\nSecond line not shown in listings.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"who":{"type":"string"}},"required":["who"]}`),
			Meta:        map[string]string{"server": "test"},
			Execute: func(_ context.Context, call *toolregistry.Call) (*toolregistry.Result, error) {
				var in struct{ Who string }
				if err := json.Unmarshal(call.Args, &in); err != nil {
					return nil, err
				}
				return toolregistry.TextResult(fmt.Sprintf("hello, %s", in.Who)), nil
			},
		}, {
			Name:        cfg.Prefix + "broken",
			Description: "Always fails.",
			Execute: func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
				return nil, errors.New("broken on purpose")
			},
		}, {
			Name:        cfg.Prefix + "wait",
			Description: "Waits until cancelled.",
			Timeout:     -1,
			Execute: func(cx context.Context, _ *toolregistry.Call) (*toolregistry.Result, error) {
				select {
				case waitStarted <- struct{}{}:
				default:
				}
				<-cx.Done()
				return nil, cx.Err()
			},
		}} {
			if _, err := reg.Register(c, t); err != nil {
				return err
			}
		}
		return nil
	})

// waitStarted is told (without blocking) when a call of the wait tool has begun.
var waitStarted = make(chan struct{}, 1)
