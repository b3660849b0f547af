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
	"testres":    testResources,
}

// testResources stands in for the shared resource tools: each echoes the
// tool name and its arguments.
var testResources = ctx.Define(ctx.Meta{Name: "testres", Inject: []ctx.Dependency{toolregistry.Key}},
	func(c *ctx.Context, _ struct{}) error {
		reg := toolregistry.Key.Use(c)
		at := c
		if p := c.Scope().Parent(); p != nil && p.Context() != nil {
			at = p.Context()
		}
		for _, name := range []string{toolListResources, toolListTemplates, toolReadResource} {
			dispose, err := reg.Register(at, toolregistry.Tool{
				Name: name,
				Execute: func(_ context.Context, call *toolregistry.Call) (*toolregistry.Result, error) {
					var in map[string]string
					if err := json.Unmarshal(call.Args, &in); err != nil {
						return nil, err
					}
					if in["server"] != "demo" {
						return nil, fmt.Errorf("unknown server %q", in["server"])
					}
					res := toolregistry.TextResult(call.Tool + " " + string(call.Args))
					res.Raw = json.RawMessage(`{"resources":[]}`)
					return res, nil
				},
			})
			if err != nil {
				return err
			}
			if _, err := c.Defer("unregister "+name, dispose); err != nil {
				return err
			}
		}
		return nil
	})

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

// testTools registers greet and broken in the layer of the scope it is
// mounted in (its parent), where the scope's agents see them.
var testTools = ctx.Define(ctx.Meta{Name: "testtools", Inject: []ctx.Dependency{toolregistry.Key}},
	func(c *ctx.Context, cfg testToolsConfig) error {
		reg := toolregistry.Key.Use(c)
		at := c
		if p := c.Scope().Parent(); p != nil && p.Context() != nil {
			at = p.Context()
		}
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
			Execute: func(c context.Context, _ *toolregistry.Call) (*toolregistry.Result, error) {
				<-c.Done()
				return nil, c.Err()
			},
		}} {
			dispose, err := reg.Register(at, t)
			if err != nil {
				return err
			}
			if _, err := c.Defer("unregister "+t.Name, dispose); err != nil {
				return err
			}
		}
		return nil
	})
