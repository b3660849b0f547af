package mcpresources_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/mcpresources"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

func TestNoProvider(t *testing.T) {
	e := newEnv(t, true)
	e.requireTools(t, e.root, false)
	if got := e.svc.Servers(e.root); len(got) != 0 {
		t.Fatalf("Servers = %v, want none", got)
	}
	for _, tool := range sharedTools {
		_, err := e.call(t, e.root, tool, `{"server":"demo","uri":"demo://readme"}`)
		if !errors.Is(err, toolregistry.ErrUnknownTool) {
			t.Fatalf("%s without providers: %v, want an unknown tool", tool, err)
		}
	}
	p, err := e.prompt.Assemble(e.root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Text != "" {
		t.Fatalf("prompt = %q, want empty", p.Text)
	}
}

func TestToolsFollowProviders(t *testing.T) {
	e := newEnv(t, false)
	changes := ctxtest.Record(t, e.root, toolregistry.Changed)
	p := &tagProvider{tag: "a"}

	d1 := e.register(t, "a", p)
	e.requireTools(t, e.root, true)
	want := map[string]string{
		mcpresources.ToolList:      string(mcpresources.ListParameters),
		mcpresources.ToolTemplates: string(mcpresources.ListParameters),
		mcpresources.ToolRead:      string(mcpresources.ReadParameters),
	}
	for _, in := range e.reg.List(e.root) {
		if in.Owner != mcpresources.ToolOwner || in.Scope != e.root.Scope() || in.Description == "" || string(in.Parameters) != want[in.Name] {
			t.Fatalf("tool %s: owner %q, scope %v, parameters %s", in.Name, in.Owner, in.Scope, in.Parameters)
		}
	}
	ev := changes.Events()
	if len(ev) != 1 || !slices.Equal(ev[0].Added, sharedTools) || ev[0].Owner != mcpresources.ToolOwner || ev[0].Scope != e.root.Scope() {
		t.Fatalf("changes after the first provider: %+v, want one adding the three tools", ev)
	}

	d2 := e.register(t, "b", &tagProvider{tag: "b"})
	if n := len(changes.Events()); n != 1 {
		t.Fatalf("a second provider changed the tools (%d changes)", n)
	}
	if got := e.svc.Servers(e.root); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("Servers = %v", got)
	}

	dispose(t, d1) // the provider whose registration added the tools
	dispose(t, d1) // idempotent
	e.requireTools(t, e.root, true)
	if n := len(changes.Events()); n != 1 {
		t.Fatalf("removing one of two providers changed the tools (%d changes)", n)
	}
	if got := e.answeredBy(t, e.root, "b"); got != "b" {
		t.Fatalf("b answered by %q", got)
	}

	dispose(t, d2)
	e.requireTools(t, e.root, false)
	ev = changes.Events()
	if len(ev) != 2 || !slices.Equal(ev[1].Removed, sharedTools) || len(ev[1].Added) != 0 {
		t.Fatalf("changes after the last provider: %+v, want one removing the three tools", ev)
	}
	if got := e.svc.Servers(e.root); len(got) != 0 {
		t.Fatalf("Servers = %v after the last removal", got)
	}

	// Registering again after full removal brings the tools back; replacing a server's
	// provider is removing it and registering the new one.
	d3, err := e.svc.Register(e.root, "a", &tagProvider{tag: "a2"})
	if err != nil {
		t.Fatalf("register after full removal: %v", err)
	}
	e.requireTools(t, e.root, true)
	if got := e.answeredBy(t, e.root, "a"); got != "a2" {
		t.Fatalf("a answered by %q after re-registration", got)
	}
	if p.calls.Load() != 0 {
		t.Fatal("a removed provider was called")
	}
	dispose(t, d3)
	e.requireTools(t, e.root, false)
}

func TestRegisterValidation(t *testing.T) {
	e := newEnv(t, false)
	p := &tagProvider{tag: "x"}
	for _, name := range []string{"", "a b", "a.b", "café", "a/b", strings.Repeat("a", 33)} {
		if _, err := e.svc.Register(e.root, name, p); !errors.Is(err, mcpresources.ErrInvalidServer) {
			t.Errorf("Register(%q): %v, want ErrInvalidServer", name, err)
		}
	}
	if _, err := e.svc.Register(e.root, "x", nil); !errors.Is(err, mcpresources.ErrInvalidServer) {
		t.Errorf("nil provider: %v, want ErrInvalidServer", err)
	}
	e.requireTools(t, e.root, false)
	for _, name := range []string{strings.Repeat("a", 32), "Az09_-", "0"} {
		if _, err := e.svc.Register(e.root, name, p); err != nil {
			t.Errorf("Register(%q): %v", name, err)
		}
	}
}

func TestDuplicateServer(t *testing.T) {
	e := newEnv(t, false)
	d := e.register(t, "docs", &tagProvider{tag: "first"})
	_, err := e.svc.Register(e.root, "docs", &tagProvider{tag: "second"})
	if !errors.Is(err, mcpresources.ErrDuplicateServer) || !strings.Contains(err.Error(), `MCP resource server "docs" is already registered in this scope`) {
		t.Fatalf("duplicate: %v", err)
	}
	if got := e.answeredBy(t, e.root, "docs"); got != "first" {
		t.Fatalf("docs answered by %q after a refused duplicate", got)
	}

	// Another layer may reuse the name; two clients side by side in one agent may not.
	first, second := server("docs", &tagProvider{tag: "agent"}), server("docs", &tagProvider{tag: "again"})
	ag := ctxtest.Layer("agent", first, second)
	ctxtest.Mount(t, e.root, ag, nil)
	ctxtest.Settle(t, e.root)
	a := active(t, ctxtest.Only(t, e.root, ag))
	states := []ctx.State{ctxtest.Only(t, e.root, first).State(), ctxtest.Only(t, e.root, second).State()}
	slices.Sort(states)
	if !slices.Equal(states, []ctx.State{ctx.Active, ctx.Failed}) {
		t.Fatalf("two servers named docs in one agent: states %v, want one active and one failed", states)
	}
	for _, def := range []ctx.PluginDef{first, second} {
		if s := ctxtest.Only(t, e.root, def); s.State() == ctx.Failed && !errors.Is(s.Err(), mcpresources.ErrDuplicateServer) {
			t.Fatalf("failed scope's error: %v", s.Err())
		}
	}
	if got := e.answeredBy(t, a, "docs"); got != "agent" && got != "again" {
		t.Fatalf("docs from the agent answered by %q, want the agent's own", got)
	}
	dispose(t, d)
	if _, err := e.svc.Register(e.root, "docs", &tagProvider{tag: "third"}); err != nil {
		t.Fatalf("the name is free again after removal: %v", err)
	}
}

func TestDisposalOrder(t *testing.T) {
	e := newEnv(t, false)
	one, two := &tagProvider{tag: "one"}, &tagProvider{tag: "two"}
	s1, s2 := server("one", one), server("two", two)
	ag := ctxtest.Layer("agent", s1, s2)
	ctxtest.Mount(t, e.root, ag, nil)
	ctxtest.Settle(t, e.root)
	agScope := ctxtest.Only(t, e.root, ag)
	a := active(t, agScope)
	e.requireTools(t, a, true)
	e.requireTools(t, e.root, false)
	for _, in := range e.reg.List(a) {
		if slices.Contains(sharedTools, in.Name) && (in.Scope != agScope || in.Owner != mcpresources.ToolOwner) {
			t.Fatalf("%s lives in %v owned by %q, want the agent's layer and %q", in.Name, in.Scope, in.Owner, mcpresources.ToolOwner)
		}
	}
	changes := ctxtest.Record(t, e.root, toolregistry.Changed)

	// Unloading either client leaves the tools to the other, whichever registered first.
	for _, def := range []ctx.PluginDef{s1, s2} {
		if err := ctxtest.Only(t, e.root, def).Dispose(ctxtest.Wait(t)); err != nil {
			t.Fatal(err)
		}
		ctxtest.Settle(t, e.root)
		if def == s1 {
			e.requireTools(t, a, true)
			if got := e.svc.Servers(a); !slices.Equal(got, []string{"two"}) {
				t.Fatalf("Servers = %v after unloading one", got)
			}
			if got := e.answeredBy(t, a, "two"); got != "two" {
				t.Fatalf("two answered by %q", got)
			}
			_, err := e.call(t, a, mcpresources.ToolList, `{"server":"one"}`)
			if !errors.Is(err, mcpresources.ErrUnknownServer) {
				t.Fatalf("the unloaded server is still callable: %v", err)
			}
			if n := len(changes.Events()); n != 0 {
				t.Fatalf("%d tool changes after unloading one of two providers", n)
			}
		}
	}
	e.requireTools(t, a, false)
	ev := changes.Events()
	if len(ev) != 1 || ev[0].Scope != agScope || !slices.Equal(ev[0].Removed, sharedTools) {
		t.Fatalf("changes after the last provider: %+v", ev)
	}
	if one.calls.Load() != 0 {
		t.Fatal("provider one was called after its removal")
	}

	// Mounting a client in the agent again brings the tools back.
	if _, err := a.Layered().Plugin(server("three", &tagProvider{tag: "three"}), nil); err != nil {
		t.Fatal(err)
	}
	ctxtest.Settle(t, e.root)
	e.requireTools(t, a, true)
	if got := e.answeredBy(t, a, "three"); got != "three" {
		t.Fatalf("three answered by %q", got)
	}

	// Unloading the agent removes its layer's tools in one change; the root is untouched.
	changes.Reset()
	if err := agScope.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	ctxtest.Settle(t, e.root)
	ev = changes.Events()
	if len(ev) != 1 || ev[0].Scope != agScope || !slices.Equal(ev[0].Removed, sharedTools) {
		t.Fatalf("changes after unloading the agent: %+v, want one removing the three tools", ev)
	}
	if got := e.svc.Servers(e.root); len(got) != 0 {
		t.Fatalf("Servers at the root = %v", got)
	}
	// Registering at the root still works: the agent's layer left nothing behind.
	d := e.register(t, "three", &tagProvider{tag: "root"})
	e.requireTools(t, e.root, true)
	dispose(t, d)
}

func TestRegisterInEffect(t *testing.T) {
	e := newEnv(t, false)
	// A provider registered inside an effect goes with the effect, and only the last
	// provider takes the tools: the tools are not nested in the first provider's effect.
	var dA, dB ctx.Disposer
	var err error
	dA, err = e.root.Effect("a", func(fx *ctx.Effect) error {
		_, err := e.svc.Register(fx.Context(), "a", &tagProvider{tag: "a"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	dB, err = e.root.Effect("b", func(fx *ctx.Effect) error {
		_, err := e.svc.Register(fx.Context(), "b", &tagProvider{tag: "b"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	dispose(t, dA)
	e.requireTools(t, e.root, true)
	dispose(t, dB)
	e.requireTools(t, e.root, false)

	// A context that has ended registers nothing.
	var dead *ctx.Context
	dC, err := e.root.Effect("c", func(fx *ctx.Effect) error { dead = fx.Context(); return nil })
	if err != nil {
		t.Fatal(err)
	}
	dispose(t, dC)
	if _, err := e.svc.Register(dead, "c", &tagProvider{tag: "c"}); !errors.Is(err, ctx.ErrInactive) {
		t.Fatalf("register through an ended context: %v, want ErrInactive", err)
	}
	e.requireTools(t, e.root, false)
}

func TestSharedToolConflictRollsBack(t *testing.T) {
	e := newEnv(t, false)
	squatter, err := e.reg.Register(e.root, toolregistry.Tool{
		Name: mcpresources.ToolRead,
		Execute: func(_ context.Context, _ *toolregistry.Call) (*toolregistry.Result, error) {
			return toolregistry.TextResult("mine"), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	p := &tagProvider{tag: "demo"}
	_, err = e.svc.Register(e.root, "demo", p)
	if !errors.Is(err, toolregistry.ErrDuplicateTool) {
		t.Fatalf("Register with a conflicting tool: %v, want ErrDuplicateTool", err)
	}
	for _, name := range []string{mcpresources.ToolList, mcpresources.ToolTemplates} {
		if _, ok := e.reg.Lookup(e.root, name); ok {
			t.Fatalf("%s is registered after a failed registration: half a set", name)
		}
	}
	if in, _ := e.reg.Lookup(e.root, mcpresources.ToolRead); in.Owner == mcpresources.ToolOwner {
		t.Fatal("the conflicting tool was replaced")
	}
	if got := e.svc.Servers(e.root); len(got) != 0 {
		t.Fatalf("the provider stayed registered: %v", got)
	}
	dispose(t, squatter)
	d, err := e.svc.Register(e.root, "demo", p)
	if err != nil {
		t.Fatalf("Register after the conflict went: %v", err)
	}
	e.requireTools(t, e.root, true)
	if got := e.answeredBy(t, e.root, "demo"); got != "demo" {
		t.Fatalf("answered by %q", got)
	}
	dispose(t, d)
}

func TestServiceUnload(t *testing.T) {
	e := newEnv(t, false)
	d := e.register(t, "global", &tagProvider{tag: "g"})
	ag := ctxtest.Layer("agent", server("docs", &tagProvider{tag: "docs"}))
	ctxtest.Mount(t, e.root, ag, nil)
	ctxtest.Settle(t, e.root)
	agScope := ctxtest.Only(t, e.root, ag)
	e.requireTools(t, active(t, agScope), true)

	if err := e.resources.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	ctxtest.Settle(t, e.root)
	e.requireTools(t, e.root, false)
	e.requireTools(t, active(t, agScope), false)
	if _, err := e.svc.Register(e.root, "late", &tagProvider{tag: "late"}); !errors.Is(err, mcpresources.ErrClosed) {
		t.Fatalf("Register on an unloaded service: %v, want ErrClosed", err)
	}
	dispose(t, d) // a provider's disposer outliving the service is harmless

	// A new service starts empty and works; the client waiting for it registers again.
	ctxtest.MountActive(t, e.root, mcpresources.Plugin, nil)
	svc, _ := mcpresources.Key.Get(e.root)
	if svc == e.svc {
		t.Fatal("the service was not replaced")
	}
	e.requireTools(t, e.root, false)
	a := active(t, agScope)
	e.requireTools(t, a, true)
	if got := svc.Servers(a); !slices.Equal(got, []string{"docs"}) {
		t.Fatalf("Servers = %v from the agent with the new service", got)
	}
}

func TestConcurrentRegistration(t *testing.T) {
	e := newEnv(t, false)
	const n = 16
	ag := ctxtest.Layer("agent")
	agScope := ctxtest.MountActive(t, e.root, ag, nil)
	layers := []*ctx.Context{e.root, agScope.Context().Layered()}
	var wg sync.WaitGroup
	errs := make(chan error, 4*n)
	for i := range n {
		wg.Go(func() {
			c := layers[i%2]
			name := fmt.Sprintf("s%d", i)
			d, err := e.svc.Register(c, name, &tagProvider{tag: name})
			if err != nil {
				errs <- err
				return
			}
			res, err := e.reg.Execute(c, c, mcpresources.ToolList, []byte(`{"server":"`+name+`"}`), toolregistry.ExecOptions{})
			if err != nil || !strings.Contains(res.Text(), "tag://"+name) {
				errs <- fmt.Errorf("call %s: %w (%s)", name, err, res.Text())
			}
			if i%4 != 0 { // keep a few
				if err := d(ctxtest.Wait(t)); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	a := active(t, agScope)
	e.requireTools(t, e.root, true)
	e.requireTools(t, a, true)
	if got := e.svc.Servers(e.root); !slices.Equal(got, []string{"s0", "s12", "s4", "s8"}) {
		t.Fatalf("Servers at the root = %v", got)
	}
	if got := e.svc.Servers(a); !slices.Equal(got, []string{"s0", "s12", "s4", "s8"}) {
		t.Fatalf("Servers from the agent = %v", got)
	}
}
