package toolregistry_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/testkit/mcptest"
)

func TestMain(m *testing.M) { mcptest.Main(m) }

// newRegistry mounts the registry on a fresh root and returns both.
func newRegistry(t *testing.T, config any) (*ctx.Context, *toolregistry.Registry) {
	t.Helper()
	root := ctxtest.New(t)
	reg := ctxtest.MountService(t, root, toolregistry.Plugin, config, toolregistry.Key)
	return root, reg
}

// plugin defines a plugin injecting the registry whose apply runs setup.
func plugin(name string, setup func(c *ctx.Context, reg *toolregistry.Registry) error) ctx.PluginDef {
	return ctx.Define(ctx.Meta{Name: name, Inject: []ctx.Dependency{toolregistry.Key}},
		func(c *ctx.Context, _ struct{}) error { return setup(c, toolregistry.Key.Use(c)) })
}

// registering defines a plain plugin that registers tools (into the layer it is mounted
// in) and mounts children.
func registering(name string, tools []toolregistry.Tool, children ...ctx.PluginDef) ctx.PluginDef {
	return plugin(name, func(c *ctx.Context, reg *toolregistry.Registry) error {
		return setUp(c, reg, tools, children)
	})
}

// agent defines an agent scope: a plugin that makes its scope a layer, registers tools
// into it and mounts children in it.
func agent(name string, tools []toolregistry.Tool, children ...ctx.PluginDef) ctx.PluginDef {
	return plugin(name, func(c *ctx.Context, reg *toolregistry.Registry) error {
		return setUp(c.Layered(), reg, tools, children)
	})
}

func setUp(c *ctx.Context, reg *toolregistry.Registry, tools []toolregistry.Tool, children []ctx.PluginDef) error {
	for _, tl := range tools {
		if _, err := reg.Register(c, tl); err != nil {
			return err
		}
	}
	for _, ch := range children {
		if _, err := c.Plugin(ch, nil); err != nil {
			return err
		}
	}
	return nil
}

// reply is a tool answering with text.
func reply(name, text string) toolregistry.Tool {
	return toolregistry.Tool{
		Name:        name,
		Description: "replies " + text,
		Execute: func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
			return toolregistry.TextResult(text), nil
		},
	}
}

// exec runs name from c and returns the result text and error.
func exec(t *testing.T, reg *toolregistry.Registry, c *ctx.Context, name, args string) (string, error) {
	t.Helper()
	var raw json.RawMessage
	if args != "" {
		raw = json.RawMessage(args)
	}
	res, err := reg.Execute(c, c, name, raw, toolregistry.ExecOptions{})
	if res == nil {
		t.Fatalf("Execute(%s) returned a nil result (err %v)", name, err)
	}
	return res.Text(), err
}

// names returns the names of infos.
func names(infos []toolregistry.Info) []string {
	out := make([]string, len(infos))
	for i, in := range infos {
		out[i] = in.Name
	}
	return out
}

// scopeCtx returns the current context of s, failing if it is not loaded.
func scopeCtx(t *testing.T, s *ctx.Scope) *ctx.Context {
	t.Helper()
	c := s.Context()
	if c == nil {
		t.Fatalf("%s is not loaded (%v, err %v)", s, s.State(), s.Err())
	}
	return c
}
