package mcpclient

import (
	"errors"
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
)

func TestPluginToolsFromDemoServer(t *testing.T) {
	e := newEnv(t)
	ms := newMemServer(demo())
	s := e.mount(nil, memConfig("demo"), &hooks{dial: ms.dial})
	if s.State() != ctx.Active {
		t.Fatalf("state %v err %v", s.State(), s.Err())
	}
	want := []string{"mcp__demo__add", "mcp__demo__add_tool", "mcp__demo__ask", "mcp__demo__big", "mcp__demo__echo", "mcp__demo__fail", "mcp__demo__image", "mcp__demo__slow"}
	if got := e.names(nil); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("tools %v", got)
	}
	res := e.mustCall(nil, "mcp__demo__echo", `{"text":"hi"}`)
	if res.Text() != "hi" {
		t.Fatalf("echo %q", res.Text())
	}
	e.st.waitPhase(t, "demo", PhaseConnected)
}

// TestServerNameUniquePerScope: a second client with the same serverName in the same
// registration scope fails naming the server, and the first stays intact; another agent
// scope may reuse the name; the name is free again once its holder is disposed.
func TestServerNameUniquePerScope(t *testing.T) {
	e := newEnv(t)
	first := e.mount(nil, memConfig("gh"), &hooks{dial: newMemServer(demo()).dial})
	second := e.mount(nil, memConfig("gh"), &hooks{dial: newMemServer(demo()).dial})
	ctxtest.RequireState(t, second, ctx.Failed)
	if err := second.Err(); !errors.Is(err, ErrDuplicateServer) || !strings.Contains(err.Error(), `mcp server "gh": serverName is already used in scope "root"`) {
		t.Fatalf("second: %v", err)
	}
	ctxtest.RequireState(t, first, ctx.Active)
	if got := e.mustCall(nil, "mcp__gh__echo", `{"text":"still here"}`).Text(); got != "still here" {
		t.Errorf("first client broken: %q", got)
	}

	// Agent scopes are registration scopes of their own.
	var agents []*ctx.Context
	agent := ctx.Define(ctx.Meta{Name: "agent"}, func(c *ctx.Context, _ struct{}) error {
		agents = append(agents, c.Layered())
		return nil
	})
	ctxtest.MountActive(t, e.root, agent, nil)
	ctxtest.MountActive(t, e.root, agent, nil)
	for _, a := range agents {
		s := e.mount(a, memConfig("gh"), &hooks{dial: newMemServer(demo()).dial})
		ctxtest.RequireState(t, s, ctx.Active)
		if got := e.mustCall(a, "mcp__gh__echo", `{"text":"agent"}`).Text(); got != "agent" {
			t.Errorf("agent call %q", got)
		}
	}

	must(t, first.Dispose(ctxtest.Wait(t)))
	must(t, second.Dispose(ctxtest.Wait(t)))
	third := e.mount(nil, memConfig("gh"), &hooks{dial: newMemServer(demo()).dial})
	ctxtest.RequireState(t, third, ctx.Active)
	must(t, e.root.Scope().Dispose(ctxtest.Wait(t)))
	if n := serverNames.In(e.root).Len(); n != 0 {
		t.Errorf("%d reservations still held after the root is gone", n)
	}
}
