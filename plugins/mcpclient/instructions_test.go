package mcpclient

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/internal/demoserver"
	"github.com/cordisgo/harness/plugins/sysprompt"
)

// prompt assembles the system prompt seen from c.
func (e *env) prompt(c *ctx.Context) string {
	e.t.Helper()
	if c == nil {
		c = e.root
	}
	sp, ok := sysprompt.Key.Get(e.root)
	if !ok {
		e.t.Fatal("no systemPrompt service")
	}
	p, err := sp.Assemble(c, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return p.Text
}

// swappableServer serves each new generation from the current server.
type swappableServer struct {
	mu  sync.Mutex
	cur *memServer
}

func (s *swappableServer) dial(cx context.Context, cfg Config, opts dialOptions) (*connection, error) {
	s.mu.Lock()
	m := s.cur
	s.mu.Unlock()
	return m.dial(cx, cfg, opts)
}

func (s *swappableServer) swap(m *memServer) {
	s.mu.Lock()
	s.cur = m
	s.mu.Unlock()
}

func instructed(text string) *mcp.Server {
	return demoserver.New(demoserver.Options{Instructions: text})
}

// TestInstructionsSection (item 8): the instructions become the attributed section
// mcp:<server>, literal, only after a successful discovery, republished when a reconnect
// brings different ones, and they follow the prompt service.
func TestInstructionsSection(t *testing.T) { synctest.Test(t, testInstructionsSection) }

func testInstructionsSection(t *testing.T) {
	e := newEnv(t)
	promptScope := ctxtest.MountActive(t, e.root, sysprompt.Plugin, nil)
	first := newMemServer(instructed("Use {{braces}} literally.\n\n"))
	first.failNext.Store(1)
	sw := &swappableServer{cur: first}
	e.mount(nil, memConfig("srv"), &hooks{dial: sw.dial})
	if p := e.prompt(nil); strings.Contains(p, "MCP server") {
		t.Fatalf("instructions published before a successful discovery: %q", p)
	}
	e.st.waitPhase(t, "srv", PhaseConnected)
	if p := e.prompt(nil); p != "### MCP server: srv\n\nUse {{braces}} literally." {
		t.Fatalf("prompt %q", p)
	}
	// tool search ranks the instructions as the server sent them
	if got := InstructionsOf(e.root, "srv"); got != "Use {{braces}} literally.\n\n" {
		t.Errorf("InstructionsOf(srv) = %q", got)
	}
	if got := InstructionsOf(e.root, "nosuch"); got != "" {
		t.Errorf("InstructionsOf(nosuch) = %q", got)
	}

	changes := ctxtest.Record(t, e.root, sysprompt.Changed)
	sw.swap(newMemServer(instructed("Version two.")))
	first.crash()
	e.st.waitPhase(t, "srv", PhaseReconnecting)
	e.st.waitPhase(t, "srv", PhaseConnected)
	if p := e.prompt(nil); p != "### MCP server: srv\n\nVersion two." {
		t.Fatalf("prompt after reconnect %q", p)
	}
	if got := InstructionsOf(e.root, "srv"); got != "Version two." {
		t.Errorf("InstructionsOf(srv) after reconnect = %q", got)
	}
	if ev := changes.Events(); len(ev) != 1 || ev[0].Kind != sysprompt.Updated || ev[0].Section != "mcp:srv" {
		t.Errorf("prompt changes %+v", ev)
	}

	// The section goes with the prompt service and comes back with a new one.
	must(t, promptScope.Dispose(ctxtest.Wait(t)))
	ctxtest.MountActive(t, e.root, sysprompt.Plugin, nil)
	ctxtest.Settle(t, e.root)
	if p := e.prompt(nil); p != "### MCP server: srv\n\nVersion two." {
		t.Fatalf("prompt with a new service %q", p)
	}
}

// TestInstructionsCapped (item 8): the attributed text is capped at maxInstructionBytes
// with a marker.
func TestInstructionsCapped(t *testing.T) {
	e := newEnv(t)
	ctxtest.MountActive(t, e.root, sysprompt.Plugin, nil)
	cfg := memConfig("srv")
	cfg.MaxInstructionBytes = 200
	e.mount(nil, cfg, &hooks{dial: newMemServer(instructed(strings.Repeat("word ", 100))).dial})
	p := e.prompt(nil)
	if len(p) > 200 || !strings.HasPrefix(p, "### MCP server: srv\n\nword word") ||
		!strings.HasSuffix(p, "[instructions truncated: 520 bytes, maxInstructionBytes 200]") {
		t.Fatalf("%d bytes: %q", len(p), p)
	}
	if st := e.st.waitPhase(t, "srv", PhaseConnected); st.InstructionBytes != len(p) {
		t.Errorf("status instruction bytes %d, want %d", st.InstructionBytes, len(p))
	}
	if u, ok := LookupUpstream(e.root, "srv"); !ok || u.Instructions() != strings.Repeat("word ", 100) {
		t.Errorf("Upstream.Instructions is not the server's whole text: %v", ok)
	}
	if got := attributedInstructions("s", "  \n\t", 10); got != "" {
		t.Errorf("blank instructions: %q", got)
	}
	if got := attributedInstructions("s", "abcdef", 5); got != "### M" {
		t.Errorf("tiny limit: %q", got)
	}
}

// TestInstructionsScoped (item 8): a client in an agent scope contributes to that agent's
// prompt only.
func TestInstructionsScoped(t *testing.T) {
	e := newEnv(t)
	ctxtest.MountActive(t, e.root, sysprompt.Plugin, nil)
	var agent *ctx.Context
	agentDef := ctx.Define(ctx.Meta{Name: "agent"}, func(c *ctx.Context, _ struct{}) error {
		agent = c
		return nil
	})
	ctxtest.MountActive(t, e.root, agentDef, nil)
	e.mount(agent.Layered(), memConfig("srv"), &hooks{dial: newMemServer(instructed("Agent only.")).dial})
	if p := e.prompt(agent); !strings.Contains(p, "Agent only.") {
		t.Errorf("agent prompt %q", p)
	}
	if p := e.prompt(nil); strings.Contains(p, "Agent only.") {
		t.Errorf("root prompt %q", p)
	}
}
