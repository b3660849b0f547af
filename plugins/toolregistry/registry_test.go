package toolregistry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

func TestRegisterValidation(t *testing.T) {
	root, reg := newRegistry(t, nil)
	ok := reply("x", "x").Execute
	tests := []struct {
		name string
		tool toolregistry.Tool
	}{
		{"empty name", toolregistry.Tool{Execute: ok}},
		{"name too long", toolregistry.Tool{Name: strings.Repeat("a", 65), Execute: ok}},
		{"space in name", toolregistry.Tool{Name: "a b", Execute: ok}},
		{"dot in name", toolregistry.Tool{Name: "a.b", Execute: ok}},
		{"non-ASCII name", toolregistry.Tool{Name: "café", Execute: ok}},
		{"no execute", toolregistry.Tool{Name: "a"}},
		{"parameters not an object", toolregistry.Tool{Name: "a", Execute: ok, Parameters: json.RawMessage(`true`)}},
		{"parameters not JSON", toolregistry.Tool{Name: "a", Execute: ok, Parameters: json.RawMessage(`{`)}},
		{"bad schema keyword", toolregistry.Tool{Name: "a", Execute: ok, Parameters: json.RawMessage(`{"type":5}`)}},
		{"bad pattern in schema", toolregistry.Tool{Name: "a", Execute: ok, Parameters: json.RawMessage(`{"properties":{"x":{"pattern":"("}}}`)}},
		{"unsupported $schema", toolregistry.Tool{Name: "a", Execute: ok, Parameters: json.RawMessage(`{"$schema":"http://json-schema.org/draft-04/schema#"}`)}},
		{"bad output schema", toolregistry.Tool{Name: "a", Execute: ok, OutputSchema: json.RawMessage(`[]`)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := reg.Register(root, tc.tool)
			if !errors.Is(err, toolregistry.ErrInvalidTool) || d != nil {
				t.Fatalf("Register: %v, want ErrInvalidTool", err)
			}
		})
	}
	valid := []toolregistry.Tool{
		{Name: strings.Repeat("a", 64), Execute: ok},
		{Name: "Az09_-", Execute: ok},
		{Name: "draft7", Execute: ok, Parameters: json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`)},
	}
	for _, tl := range valid {
		if _, err := reg.Register(root, tl); err != nil {
			t.Errorf("Register(%q): %v", tl.Name, err)
		}
	}
	if got := len(reg.List(root)); got != len(valid) {
		t.Fatalf("%d tools listed, want %d", got, len(valid))
	}
}

// run_code is PTC mode's: no plugin registers it, directly or in a set.
func TestReservedName(t *testing.T) {
	root, reg := newRegistry(t, nil)
	ok := reply("x", "x").Execute
	if _, err := reg.Register(root, toolregistry.Tool{Name: toolregistry.ReservedRunCode, Execute: ok}); !errors.Is(err, toolregistry.ErrReservedName) || !strings.Contains(err.Error(), "run_code") {
		t.Fatalf("Register: %v, want ErrReservedName", err)
	}
	set, err := reg.NewSet(root, "mcp:x")
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Replace([]toolregistry.Tool{{Name: "a", Execute: ok}, {Name: "run_code", Execute: ok}}); !errors.Is(err, toolregistry.ErrReservedName) {
		t.Fatalf("Replace: %v, want ErrReservedName", err)
	}
	if n := len(reg.List(root)); n != 0 {
		t.Fatalf("%d tools listed after refused registrations", n)
	}
}

func TestListInfo(t *testing.T) {
	root, reg := newRegistry(t, nil)
	params := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)
	out := json.RawMessage(`{"type":"object"}`)
	meta := map[string]string{"server": "gh"}
	tl := toolregistry.Tool{Name: "search", Description: "finds", Parameters: params, OutputSchema: out, Meta: meta,
		Execute: reply("x", "").Execute}
	s := ctxtest.MountActive(t, root, registering("github", []toolregistry.Tool{tl, reply("b", ""), reply("a", "")}), nil)
	meta["server"] = "changed" // the registry keeps its own copy

	// A plugin mounted at the root registers global tools.
	infos := reg.List(root)
	if got := names(infos); !slices.Equal(got, []string{"a", "b", "search"}) {
		t.Fatalf("List = %v, want sorted a b search", got)
	}
	in := infos[2]
	if in.Description != "finds" || string(in.Parameters) != string(params) || string(in.OutputSchema) != string(out) ||
		in.Owner != "github" || in.Scope != root.Scope() || in.Meta["server"] != "gh" {
		t.Fatalf("Info = %+v", in)
	}
	if a := infos[0]; string(a.Parameters) != `{"type":"object"}` || a.OutputSchema != nil {
		t.Fatalf("defaults: parameters %s, output schema %s", a.Parameters, a.OutputSchema)
	}
	// The listing is the caller's: changing it changes nothing in the registry.
	infos[0].Name = "changed"
	if got := names(reg.List(root)); !slices.Equal(got, []string{"a", "b", "search"}) {
		t.Fatalf("List after modifying an earlier listing = %v", got)
	}
	if got, ok := reg.Lookup(scopeCtx(t, s), "search"); !ok || got.Name != "search" {
		t.Fatalf("Lookup = %+v, %v", got, ok)
	}
	if s.Context() == nil {
		t.Fatal("github not loaded")
	}
}

func TestDuplicateInOneLayer(t *testing.T) {
	root, reg := newRegistry(t, nil)
	errc := make(chan error, 2)
	alpha := plugin("alpha", func(c *ctx.Context, reg *toolregistry.Registry) error {
		if _, err := reg.Register(c, reply("dup", "alpha")); err != nil {
			return err
		}
		_, err := reg.Register(c, reply("dup", "again"))
		errc <- err
		return nil
	})
	ctxtest.MountActive(t, root, alpha, nil)
	if err := <-errc; !errors.Is(err, toolregistry.ErrDuplicateTool) || !strings.Contains(err.Error(), `"alpha"`) {
		t.Fatalf("second Register: %v, want ErrDuplicateTool naming alpha", err)
	}
	// Two plugins mounted side by side share the root layer: the second one's
	// registration fails, naming both owners, and so does a set's.
	beta := plugin("beta", func(c *ctx.Context, reg *toolregistry.Registry) error {
		_, err := reg.Register(c, reply("dup", "beta"))
		errc <- err
		set, err := reg.NewSet(c, "mcp:gh")
		if err != nil {
			return err
		}
		errc <- set.Replace([]toolregistry.Tool{reply("other", ""), reply("dup", "3")})
		return nil
	})
	ctxtest.MountActive(t, root, beta, nil)
	for _, owner := range []string{`"beta"`, `"mcp:gh"`} {
		err := <-errc
		if !errors.Is(err, toolregistry.ErrDuplicateTool) || !strings.Contains(err.Error(), `"alpha"`) ||
			!strings.Contains(err.Error(), owner) || !strings.Contains(err.Error(), `scope "root"`) {
			t.Fatalf("collision: %v, want ErrDuplicateTool naming alpha and %s", err, owner)
		}
	}
	if _, err := reg.Register(root, reply("dup", "root")); !errors.Is(err, toolregistry.ErrDuplicateTool) {
		t.Fatalf("the root registers into the same layer: %v", err)
	}
	// The same name in another layer is not a duplicate: it shadows.
	a := ctxtest.MountActive(t, root, agent("agent", []toolregistry.Tool{reply("dup", "agent")}), nil)
	if got, _ := exec(t, reg, root, "dup", ""); got != "alpha" {
		t.Fatalf("root sees %q", got)
	}
	if got, _ := exec(t, reg, scopeCtx(t, a), "dup", ""); got != "agent" {
		t.Fatalf("agent sees %q", got)
	}
}

func TestLayers(t *testing.T) {
	root, reg := newRegistry(t, nil)
	layers := make(chan [2]*ctx.Scope, 8) // registering scope, layer
	record := func(c *ctx.Context) { layers <- [2]*ctx.Scope{c.Scope(), c.Layer()} }
	// A plain plugin at the root that registers from an Inject sub-scope and an effect.
	sub := plugin("sub", func(c *ctx.Context, reg *toolregistry.Registry) error {
		record(c)
		_, err := c.Inject("sub-inject", []ctx.Dependency{toolregistry.Key}, func(c *ctx.Context) error {
			record(c)
			_, err := reg.Register(c, reply("from_inject", ""))
			return err
		})
		return err
	})
	inAgent := plugin("in-agent", func(c *ctx.Context, reg *toolregistry.Registry) error {
		record(c)
		_, err := reg.Register(c, reply("from_agent_plugin", ""))
		return err
	})
	ag := plugin("agent", func(c *ctx.Context, reg *toolregistry.Registry) error {
		record(c) // its own activation context is not marked
		c = c.Layered()
		record(c)
		if _, err := c.Effect("e", func(e *ctx.Effect) error { record(e.Context()); return nil }); err != nil {
			return err
		}
		_, err := c.Plugin(inAgent, nil)
		return err
	})
	ctxtest.Mount(t, root, sub, nil)
	ctxtest.Mount(t, root, ag, nil)
	ctxtest.Settle(t, root)
	record(root)
	close(layers)
	agentScope := ctxtest.Only(t, root, ag)
	want := map[string][]*ctx.Scope{
		"root":       {root.Scope()},
		"sub":        {root.Scope(), root.Scope()}, // the plugin and its Inject sub-scope
		"sub-inject": nil,
		"agent":      {root.Scope(), agentScope, agentScope},
		"in-agent":   {agentScope},
	}
	got := map[string][]*ctx.Scope{}
	for l := range layers {
		got[l[0].Name()] = append(got[l[0].Name()], l[1])
	}
	got["sub"] = append(got["sub"], got["sub-inject"]...)
	delete(got, "sub-inject")
	delete(want, "sub-inject")
	for name, w := range want {
		if !slices.Equal(got[name], w) {
			t.Errorf("%s: layers %v, want %v", name, got[name], w)
		}
	}
	if in, ok := reg.Lookup(root, "from_inject"); !ok || in.Owner != "sub-inject" || in.Scope != root.Scope() {
		t.Fatalf("a tool registered from an Inject sub-scope: %+v, %v", in, ok)
	}
	if _, ok := reg.Lookup(root, "from_agent_plugin"); ok {
		t.Fatal("a tool of the agent layer is visible from the root")
	}
	if in, ok := reg.Lookup(scopeCtx(t, agentScope), "from_agent_plugin"); !ok || in.Scope != agentScope || in.Owner != "in-agent" {
		t.Fatalf("agent tool %+v, %v", in, ok)
	}
}

func TestScopedVisibility(t *testing.T) {
	root, reg := newRegistry(t, nil)
	if _, err := reg.Register(root, reply("shared", "root")); err != nil {
		t.Fatal(err)
	}
	// A plain plugin at the root: global tools.
	server := registering("server", []toolregistry.Tool{reply("global", "server")})
	// Agent scopes: what their plugins register stays inside.
	innerTools := registering("inner-tools", []toolregistry.Tool{reply("deep", "inner")})
	inner := agent("inner", []toolregistry.Tool{reply("shared", "inner")}, innerTools)
	agentTools := registering("agent-tools", []toolregistry.Tool{reply("mine", "agent")})
	ag := agent("agent", []toolregistry.Tool{reply("shared", "agent")}, agentTools, inner)
	sibling := agent("sibling", []toolregistry.Tool{reply("theirs", "sibling")})
	for _, def := range []ctx.PluginDef{server, ag, sibling} {
		ctxtest.Mount(t, root, def, nil)
	}
	ctxtest.Settle(t, root)
	scopes := map[string]*ctx.Context{
		"root":        root,
		"server":      scopeCtx(t, ctxtest.Only(t, root, server)),
		"agent":       scopeCtx(t, ctxtest.Only(t, root, ag)),
		"agent-tools": scopeCtx(t, ctxtest.Only(t, root, agentTools)),
		"inner":       scopeCtx(t, ctxtest.Only(t, root, inner)),
		"inner-tools": scopeCtx(t, ctxtest.Only(t, root, innerTools)),
		"sibling":     scopeCtx(t, ctxtest.Only(t, root, sibling)),
	}
	atRoot := map[string]string{"shared": "root", "global": "server", "mine": "", "theirs": "", "deep": ""}
	inAgent := map[string]string{"shared": "agent", "global": "server", "mine": "agent", "theirs": "", "deep": ""}
	inInner := map[string]string{"shared": "inner", "global": "server", "mine": "agent", "deep": "inner", "theirs": ""}
	tests := []struct {
		from    string
		visible []string
		calls   map[string]string // tool → expected reply ("" = unknown)
	}{
		{"root", []string{"global", "shared"}, atRoot},
		{"server", []string{"global", "shared"}, atRoot},
		{"agent", []string{"global", "mine", "shared"}, inAgent},
		{"agent-tools", []string{"global", "mine", "shared"}, inAgent},
		{"inner", []string{"deep", "global", "mine", "shared"}, inInner},
		{"inner-tools", []string{"deep", "global", "mine", "shared"}, inInner},
		{"sibling", []string{"global", "shared", "theirs"},
			map[string]string{"shared": "root", "global": "server", "theirs": "sibling", "mine": "", "deep": ""}},
	}
	for _, tc := range tests {
		t.Run(tc.from, func(t *testing.T) {
			c := scopes[tc.from]
			if got := names(reg.List(c)); !slices.Equal(got, tc.visible) {
				t.Fatalf("List = %v, want %v", got, tc.visible)
			}
			for tool, want := range tc.calls {
				got, err := exec(t, reg, c, tool, "")
				switch {
				case want == "" && !errors.Is(err, toolregistry.ErrUnknownTool):
					t.Errorf("%s: %q, %v; want unknown tool", tool, got, err)
				case want != "" && (err != nil || got != want):
					t.Errorf("%s: %q, %v; want %q", tool, got, err, want)
				}
			}
		})
	}
	// Attribution follows the nearest layer.
	if in, _ := reg.Lookup(scopes["inner-tools"], "shared"); in.Owner != "inner" || in.Scope != scopes["inner"].Scope() {
		t.Fatalf("shared seen from inner-tools: owner %q, scope %v", in.Owner, in.Scope)
	}
	if in, _ := reg.Lookup(scopes["agent"], "mine"); in.Owner != "agent-tools" || in.Scope != scopes["agent"].Scope() {
		t.Fatalf("mine: owner %q, scope %v", in.Owner, in.Scope)
	}
}

func TestDisposal(t *testing.T) {
	root, reg := newRegistry(t, nil)
	changes := ctxtest.Record(t, root, toolregistry.Changed)
	var tools []toolregistry.Tool
	for i := range 50 {
		tools = append(tools, reply(fmt.Sprintf("t%02d", i), ""))
	}
	s := ctxtest.MountActive(t, root, agent("many", tools), nil)
	if n := len(changes.Events()); n != 50 {
		t.Fatalf("%d change events for 50 registrations, want 50", n)
	}
	if _, err := reg.Register(root, reply("t00", "root")); err != nil {
		t.Fatal(err)
	}
	c := scopeCtx(t, s)
	if got, _ := exec(t, reg, c, "t00", ""); got != "" {
		t.Fatalf("the agent's t00 should shadow the root's, got %q", got)
	}
	changes.Reset()

	if err := s.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	evs := changes.Events()
	if len(evs) != 1 {
		t.Fatalf("%d change events on unload, want 1: %+v", len(evs), evs)
	}
	if ev := evs[0]; ev.Scope != s || len(ev.Removed) != 50 || !slices.IsSorted(ev.Removed) || len(ev.Added) != 0 {
		t.Fatalf("unload change = %+v", ev)
	}
	if got := names(reg.List(root)); !slices.Equal(got, []string{"t00"}) {
		t.Fatalf("after unload the root lists %v", got)
	}
	// The stale context now sees the root's tool, but cannot call it: it is done.
	if in, ok := reg.Lookup(c, "t00"); !ok || in.Owner != "root" {
		t.Fatalf("after unload Lookup = %+v, %v", in, ok)
	}
	if _, err := exec(t, reg, c, "t00", ""); !errors.Is(err, toolregistry.ErrCancelled) {
		t.Fatalf("call from an unloaded scope: %v, want cancelled", err)
	}
}

func TestDisposer(t *testing.T) {
	root, reg := newRegistry(t, nil)
	changes := ctxtest.Record(t, root, toolregistry.Changed)
	d, err := reg.Register(root, reply("x", ""))
	if err != nil {
		t.Fatal(err)
	}
	if evs := changes.Events(); len(evs) != 1 || !slices.Equal(evs[0].Added, []string{"x"}) || evs[0].Owner != "root" {
		t.Fatalf("register events %+v", evs)
	}
	for range 2 {
		if err := d(ctxtest.Wait(t)); err != nil {
			t.Fatal(err)
		}
	}
	evs := changes.Events()
	if len(evs) != 2 || !slices.Equal(evs[1].Removed, []string{"x"}) {
		t.Fatalf("events %+v", evs)
	}
	if _, ok := reg.Lookup(root, "x"); ok {
		t.Fatal("disposed tool still visible")
	}
	// The name is free again.
	if _, err := reg.Register(root, reply("x", "")); err != nil {
		t.Fatal(err)
	}
}

func TestNestedEffectRegistration(t *testing.T) {
	root, reg := newRegistry(t, nil)
	changes := ctxtest.Record(t, root, toolregistry.Changed)
	var effect ctx.Disposer
	def := plugin("nested", func(c *ctx.Context, reg *toolregistry.Registry) error {
		// An effect created before any registration: its tools are removed by the
		// layer's flush, which runs before the effect's own cleanup.
		var err error
		effect, err = c.Effect("holder", func(e *ctx.Effect) error {
			if _, err := reg.Register(e.Context(), reply("inside", "")); err != nil {
				return err
			}
			set, err := reg.NewSet(e.Context(), "inner-set")
			if err != nil {
				return err
			}
			if err := set.Replace([]toolregistry.Tool{reply("set_tool", "")}); err != nil {
				return err
			}
			_, err = reg.Restrict(e.Context(), nil, []string{"hidden"})
			return err
		})
		if err != nil {
			return err
		}
		_, err = reg.Register(c, reply("outside", ""))
		return err
	})
	s := ctxtest.MountActive(t, root, def, nil)
	c := scopeCtx(t, s)
	if got := names(reg.List(c)); !slices.Equal(got, []string{"inside", "outside", "set_tool"}) {
		t.Fatalf("List = %v", got)
	}
	// Disposing the effect while the scope lives undoes each registration at once, newest
	// first: the mask, the set, the tool.
	changes.Reset()
	if err := effect(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	evs := changes.Events()
	if len(evs) != 3 || !evs[0].Restricted || !slices.Equal(evs[1].Removed, []string{"set_tool"}) ||
		!slices.Equal(evs[2].Removed, []string{"inside"}) {
		t.Fatalf("effect disposal events %+v", evs)
	}
	if err := s.Restart(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	c = scopeCtx(t, s)
	if got := names(reg.List(c)); !slices.Equal(got, []string{"inside", "outside", "set_tool"}) {
		t.Fatalf("after restart List = %v", got)
	}
	// Unloading: the layer's flush (registered with the first registration, inside the
	// effect, so after the effect itself) runs before the effect is disposed and removes
	// its tool, set and mask too: one change.
	changes.Reset()
	if err := s.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	evs = changes.Events()
	if len(evs) != 1 || !slices.Equal(evs[0].Removed, []string{"inside", "outside", "set_tool"}) || !evs[0].Restricted {
		t.Fatalf("unload events %+v", evs)
	}
}

func TestRegisterOnInactiveContext(t *testing.T) {
	root, reg := newRegistry(t, nil)
	s := ctxtest.MountActive(t, root, plugin("gone", func(*ctx.Context, *toolregistry.Registry) error { return nil }), nil)
	c := scopeCtx(t, s)
	if err := s.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Register(c, reply("late", "")); !errors.Is(err, ctx.ErrInactive) {
		t.Fatalf("Register on an unloaded scope: %v, want ErrInactive", err)
	}
	if _, err := reg.NewSet(c, ""); !errors.Is(err, ctx.ErrInactive) {
		t.Fatalf("NewSet on an unloaded scope: %v, want ErrInactive", err)
	}
	if _, err := reg.Restrict(c, nil, []string{"*"}); !errors.Is(err, ctx.ErrInactive) {
		t.Fatalf("Restrict on an unloaded scope: %v, want ErrInactive", err)
	}
	if len(reg.List(root)) != 0 {
		t.Fatal("a refused registration is listed")
	}
}

func TestRegistryUnload(t *testing.T) {
	root := ctxtest.New(t)
	rs := ctxtest.MountActive(t, root, toolregistry.Plugin, nil)
	reg, _ := toolregistry.Key.Get(root)
	user := ctxtest.MountActive(t, root, registering("user", []toolregistry.Tool{reply("u", "")}), nil)
	if err := rs.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	ctxtest.Settle(t, root)
	ctxtest.RequireState(t, user, ctx.Pending) // its tools went with its activation
	if _, err := reg.Register(root, reply("late", "")); !errors.Is(err, toolregistry.ErrClosed) {
		t.Fatalf("Register after the registry unloaded: %v, want ErrClosed", err)
	}
	if _, err := reg.NewSet(root, ""); !errors.Is(err, toolregistry.ErrClosed) {
		t.Fatalf("NewSet after the registry unloaded: %v, want ErrClosed", err)
	}
	if _, err := reg.Restrict(root, nil, []string{"*"}); !errors.Is(err, toolregistry.ErrClosed) {
		t.Fatalf("Restrict after the registry unloaded: %v, want ErrClosed", err)
	}
}

func TestRestrict(t *testing.T) {
	root, reg := newRegistry(t, nil)
	for _, n := range []string{"mcp__gh__issues", "mcp__gh__pulls", "mcp__fs__read", "bash", "web_fetch"} {
		if _, err := reg.Register(root, reply(n, n)); err != nil {
			t.Fatal(err)
		}
	}
	all := []string{"bash", "mcp__fs__read", "mcp__gh__issues", "mcp__gh__pulls", "web_fetch"}
	tests := []struct {
		name        string
		allow, deny []string
		want        []string
	}{
		{"no mask", nil, nil, all},
		{"deny one server", nil, []string{"mcp__gh__*"}, []string{"bash", "mcp__fs__read", "web_fetch"}},
		{"allow one server", []string{"mcp__gh__*"}, nil, []string{"mcp__gh__issues", "mcp__gh__pulls", "own"}},
		{"allow and deny", []string{"mcp__*"}, []string{"*pulls"}, []string{"mcp__fs__read", "mcp__gh__issues", "own"}},
		{"deny everything inherited", nil, []string{"*"}, []string{"own"}},
		{"character class", []string{"[bw]*"}, nil, []string{"bash", "own", "web_fetch"}},
		{"single character", nil, []string{"bas?"}, []string{"mcp__fs__read", "mcp__gh__issues", "mcp__gh__pulls", "web_fetch"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			def := plugin("agent", func(c *ctx.Context, reg *toolregistry.Registry) error {
				c = c.Layered()
				if tc.allow != nil || tc.deny != nil {
					if _, err := reg.Restrict(c, tc.allow, tc.deny); err != nil {
						return err
					}
				}
				// The scope's own tools are never masked, even when a pattern matches them.
				_, err := reg.Register(c, reply("own", "own"))
				return err
			})
			s := ctxtest.MountActive(t, root, def, nil)
			defer func() { _ = s.Dispose(ctxtest.Wait(t)) }()
			c := scopeCtx(t, s)
			want := tc.want
			if !slices.Contains(want, "own") {
				want = append(slices.Clone(want), "own")
				slices.Sort(want)
			}
			if got := names(reg.List(c)); !slices.Equal(got, want) {
				t.Fatalf("List = %v, want %v", got, want)
			}
			// Hidden tools are uncallable too, and the root is not affected.
			for _, n := range all {
				_, err := exec(t, reg, c, n, "")
				if hidden := !slices.Contains(want, n); hidden != errors.Is(err, toolregistry.ErrUnknownTool) {
					t.Errorf("call %s: %v (hidden %v)", n, err, hidden)
				}
			}
			if got := names(reg.List(root)); !slices.Equal(got, all) {
				t.Fatalf("root lists %v", got)
			}
		})
	}
}

func TestRestrictNestedAndDisposal(t *testing.T) {
	root, reg := newRegistry(t, nil)
	changes := ctxtest.Record(t, root, toolregistry.Changed)
	for _, n := range []string{"a", "b", "c"} {
		if _, err := reg.Register(root, reply(n, n)); err != nil {
			t.Fatal(err)
		}
	}
	var mask ctx.Disposer
	inner := agent("inner", []toolregistry.Tool{reply("b", "inner-b")})
	outer := plugin("outer", func(c *ctx.Context, reg *toolregistry.Registry) error {
		c = c.Layered()
		var err error
		if mask, err = reg.Restrict(c, nil, []string{"a", "b"}); err != nil {
			return err
		}
		_, err = c.Plugin(inner, nil)
		return err
	})
	ctxtest.Mount(t, root, outer, nil)
	ctxtest.Settle(t, root)
	oc, ic := scopeCtx(t, ctxtest.Only(t, root, outer)), scopeCtx(t, ctxtest.Only(t, root, inner))
	if got := names(reg.List(oc)); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("outer lists %v", got)
	}
	// inner registered its own b below the mask: visible; a stays hidden in the subtree.
	if got := names(reg.List(ic)); !slices.Equal(got, []string{"b", "c"}) {
		t.Fatalf("inner lists %v", got)
	}
	_, err := exec(t, reg, ic, "a", "")
	var te *toolregistry.ToolError
	if !errors.As(err, &te) || te.Code != toolregistry.CodeUnknownTool || !strings.Contains(te.Msg, `hidden in scope "outer"`) {
		t.Fatalf("hidden call: %v", err)
	}
	changes.Reset()
	if err := mask(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	if evs := changes.Events(); len(evs) != 1 || !evs[0].Restricted || evs[0].Scope != oc.Scope() {
		t.Fatalf("mask disposal events %+v", evs)
	}
	if !changes.Events()[0].Affects(ic.Scope()) || changes.Events()[0].Affects(root.Scope()) {
		t.Fatal("Affects: the change concerns outer's subtree only")
	}
	if got := names(reg.List(ic)); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("inner lists %v after the mask went", got)
	}
}

func TestRestrictInvalidPattern(t *testing.T) {
	root, reg := newRegistry(t, nil)
	for _, p := range [][2][]string{{{"["}, nil}, {nil, {"a[b"}}, {{""}, nil}} {
		if _, err := reg.Restrict(root, p[0], p[1]); !errors.Is(err, toolregistry.ErrInvalidPattern) {
			t.Errorf("Restrict(%q, %q): %v, want ErrInvalidPattern", p[0], p[1], err)
		}
	}
}

func TestSetReplace(t *testing.T) {
	root, reg := newRegistry(t, nil)
	changes := ctxtest.Record(t, root, toolregistry.Changed)
	set, err := reg.NewSet(root, "mcp:gh")
	if err != nil {
		t.Fatal(err)
	}
	if set.Owner() != "mcp:gh" {
		t.Fatalf("owner %q", set.Owner())
	}
	many := make([]toolregistry.Tool, 200)
	for i := range many {
		many[i] = reply(fmt.Sprintf("mcp__gh__t%03d", i), "v1")
	}
	if err := set.Replace(many); err != nil {
		t.Fatal(err)
	}
	evs := changes.Events()
	if len(evs) != 1 || len(evs[0].Added) != 200 || evs[0].Owner != "mcp:gh" {
		t.Fatalf("Replace of 200 tools: %d events", len(evs))
	}
	if n := len(reg.List(root)); n != 200 {
		t.Fatalf("%d listed", n)
	}
	if in, _ := reg.Lookup(root, "mcp__gh__t000"); in.Owner != "mcp:gh" {
		t.Fatalf("owner %q", in.Owner)
	}

	// Second version: t000 changed, t001 unchanged, the rest gone, one added.
	changes.Reset()
	changed := reply("mcp__gh__t000", "v2")
	changed.Description = "new description"
	if err := set.Replace([]toolregistry.Tool{changed, many[1], reply("mcp__gh__new", "")}); err != nil {
		t.Fatal(err)
	}
	evs = changes.Events()
	if len(evs) != 1 || !slices.Equal(evs[0].Added, []string{"mcp__gh__new"}) ||
		!slices.Equal(evs[0].Updated, []string{"mcp__gh__t000"}) || len(evs[0].Removed) != 198 {
		t.Fatalf("diff event %+v", evs)
	}
	if got, _ := exec(t, reg, root, "mcp__gh__t000", ""); got != "v2" {
		t.Fatalf("replaced tool answers %q", got)
	}
	if got := set.Names(); !slices.Equal(got, []string{"mcp__gh__new", "mcp__gh__t000", "mcp__gh__t001"}) {
		t.Fatalf("Names = %v", got)
	}

	// Identical replacement: no event.
	changes.Reset()
	if err := set.Replace([]toolregistry.Tool{changed, many[1], reply("mcp__gh__new", "")}); err != nil {
		t.Fatal(err)
	}
	if n := len(changes.Events()); n != 0 {
		t.Fatalf("identical Replace emitted %d events", n)
	}

	// Failures keep the previous set and emit nothing.
	if _, err := reg.Register(root, reply("taken", "")); err != nil {
		t.Fatal(err)
	}
	changes.Reset()
	failures := []struct {
		name  string
		tools []toolregistry.Tool
		want  error
	}{
		{"bad name", []toolregistry.Tool{reply("ok", ""), reply("bad name", "")}, toolregistry.ErrInvalidTool},
		{"listed twice", []toolregistry.Tool{reply("twice", ""), reply("twice", "")}, toolregistry.ErrDuplicateTool},
		{"owned by another", []toolregistry.Tool{reply("ok", ""), reply("taken", "")}, toolregistry.ErrDuplicateTool},
	}
	for _, f := range failures {
		t.Run(f.name, func(t *testing.T) {
			if err := set.Replace(f.tools); !errors.Is(err, f.want) {
				t.Fatalf("Replace: %v, want %v", err, f.want)
			}
			if got := set.Names(); len(got) != 3 {
				t.Fatalf("previous set not kept: %v", got)
			}
		})
	}
	if n := len(changes.Events()); n != 0 {
		t.Fatalf("failed Replace calls emitted %d events", n)
	}

	if err := set.Clear(); err != nil {
		t.Fatal(err)
	}
	if evs := changes.Events(); len(evs) != 1 || len(evs[0].Removed) != 3 {
		t.Fatalf("Clear events %+v", evs)
	}
	if err := set.Replace([]toolregistry.Tool{reply("again", "")}); err != nil {
		t.Fatalf("Replace after Clear: %v", err)
	}
	changes.Reset()
	if err := set.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	if evs := changes.Events(); len(evs) != 1 || !slices.Equal(evs[0].Removed, []string{"again"}) {
		t.Fatalf("Dispose events %+v", evs)
	}
	if err := set.Replace(nil); !errors.Is(err, toolregistry.ErrClosed) {
		t.Fatalf("Replace after Dispose: %v, want ErrClosed", err)
	}
	if got := names(reg.List(root)); !slices.Equal(got, []string{"taken"}) {
		t.Fatalf("List = %v", got)
	}
}

func TestUnloadIsOneChange(t *testing.T) {
	root, reg := newRegistry(t, nil)
	if _, err := reg.Register(root, reply("inherited", "")); err != nil {
		t.Fatal(err)
	}
	changes := ctxtest.Record(t, root, toolregistry.Changed)
	var set *toolregistry.Set
	def := plugin("server", func(c *ctx.Context, reg *toolregistry.Registry) error {
		c = c.Layered()
		for i := range 30 {
			if _, err := reg.Register(c, reply(fmt.Sprintf("single%02d", i), "")); err != nil {
				return err
			}
		}
		var err error
		if set, err = reg.NewSet(c, "mcp:srv"); err != nil {
			return err
		}
		tools := make([]toolregistry.Tool, 20)
		for i := range tools {
			tools[i] = reply(fmt.Sprintf("set%02d", i), "")
		}
		if err := set.Replace(tools); err != nil {
			return err
		}
		_, err = reg.Restrict(c, nil, []string{"inherited"})
		return err
	})
	s := ctxtest.MountActive(t, root, def, nil)
	if n := len(reg.List(scopeCtx(t, s))); n != 50 {
		t.Fatalf("%d tools visible, want 50", n)
	}
	changes.Reset()
	if err := s.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	evs := changes.Events()
	if len(evs) != 1 {
		t.Fatalf("unload emitted %d change events, want 1: %+v", len(evs), evs)
	}
	if ev := evs[0]; len(ev.Removed) != 50 || !ev.Restricted || ev.Scope != s {
		t.Fatalf("unload change: %d removed, restricted %v", len(ev.Removed), ev.Restricted)
	}
	if err := set.Replace(nil); !errors.Is(err, toolregistry.ErrClosed) {
		t.Fatalf("Replace after the owner unloaded: %v, want ErrClosed", err)
	}
	if got := names(reg.List(root)); !slices.Equal(got, []string{"inherited"}) {
		t.Fatalf("List = %v", got)
	}
}

func TestConcurrentUse(t *testing.T) {
	root, reg := newRegistry(t, nil)
	if _, err := reg.Register(root, reply("stable", "ok")); err != nil {
		t.Fatal(err)
	}
	set, err := reg.NewSet(root, "flappy")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			_ = set.Replace([]toolregistry.Tool{reply(fmt.Sprintf("v%d", i%3), "")})
			d, err := reg.Register(root, reply("temp", ""))
			if err == nil {
				_ = d(context.Background())
			}
		}
	}()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				if got, err := exec(t, reg, root, "stable", "{}"); err != nil || got != "ok" {
					t.Errorf("stable: %q, %v", got, err)
					return
				}
				_ = reg.List(root)
			}
		})
	}
	wg.Wait()
	<-done
}
