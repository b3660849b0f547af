package mcpresources_test

import (
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/mcpresources"
	"github.com/cordisgo/harness/plugins/sysprompt"
)

// section returns the text of the resource-server section in the prompt assembled from c,
// or "" when the prompt has none.
func section(t *testing.T, sp *sysprompt.Service, c *ctx.Context) string {
	t.Helper()
	p, err := sp.Assemble(c, nil)
	if err != nil {
		t.Fatalf("assemble from %s: %v", c.Scope(), err)
	}
	text := ""
	for _, s := range p.Sections {
		if s.Name == mcpresources.SectionName {
			if text != "" {
				t.Fatalf("two resource sections from %s", c.Scope())
			}
			if s.Order != sysprompt.OrderMCPServers {
				t.Fatalf("section order %d", s.Order)
			}
			text = s.Text
		}
	}
	return text
}

// requireSection fails unless the section seen from c lists exactly servers (none: no
// section).
func requireSection(t *testing.T, sp *sysprompt.Service, c *ctx.Context, servers string) {
	t.Helper()
	text := section(t, sp, c)
	if servers == "" {
		if text != "" {
			t.Fatalf("prompt from %s has a resource section:\n%s", c.Scope(), text)
		}
		return
	}
	if !strings.HasPrefix(text, "## MCP resource servers\n\n") || !strings.Contains(text, "server argument: "+servers+".") {
		t.Fatalf("section from %s:\n%s\nwant it to list %s", c.Scope(), text, servers)
	}
	for _, tool := range []string{mcpresources.ToolList, mcpresources.ToolTemplates, mcpresources.ToolRead} {
		if !strings.Contains(text, tool) {
			t.Fatalf("section from %s does not mention %s", c.Scope(), tool)
		}
	}
}

func TestPromptSection(t *testing.T) {
	e := newEnv(t, true)
	changes := ctxtest.Record(t, e.root, sysprompt.Changed)
	d := e.register(t, "demo", &tagProvider{tag: "demo"})
	a := ctxtest.Layer("a", server("docs", &tagProvider{tag: "docs"}), server("alpha", &tagProvider{tag: "alpha"}))
	b := ctxtest.Layer("b")
	ctxtest.Mount(t, e.root, a, nil)
	ctxtest.Mount(t, e.root, b, nil)
	ctxtest.Settle(t, e.root)
	ac, bc := active(t, ctxtest.Only(t, e.root, a)), active(t, ctxtest.Only(t, e.root, b))

	requireSection(t, e.prompt, e.root, `["demo"]`)
	requireSection(t, e.prompt, ac, `["alpha","demo","docs"]`)
	requireSection(t, e.prompt, bc, `["demo"]`)

	// The list precedes the servers' own instruction sections of the same order.
	if _, err := e.prompt.Register(e.root, sysprompt.Section{Name: "mcp:demo", Order: sysprompt.OrderMCPServers, Text: "### MCP server: demo"}); err != nil {
		t.Fatal(err)
	}
	p, err := e.prompt.Assemble(ac, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range p.Sections {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{mcpresources.SectionName, "mcp:demo"}) {
		t.Fatalf("sections %v", names)
	}

	// Removing the root's only provider drops the root layer's section: the root and b see
	// none, the agent still lists its own servers.
	changes.Reset()
	dispose(t, d)
	requireSection(t, e.prompt, e.root, "")
	requireSection(t, e.prompt, bc, "")
	requireSection(t, e.prompt, ac, `["alpha","docs"]`)
	ev := changes.Events()
	if len(ev) != 1 || ev[0].Kind != sysprompt.Removed || ev[0].Section != mcpresources.SectionName || ev[0].Layer != e.root.Scope() {
		t.Fatalf("prompt changes %+v, want the root layer's section removed", ev)
	}

	if err := ctxtest.Only(t, e.root, a).Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	ctxtest.Settle(t, e.root)
	requireSection(t, e.prompt, e.root, "")
	if p, err := e.prompt.Assemble(e.root, nil); err != nil || p.Text != "### MCP server: demo" {
		t.Fatalf("prompt %q (%v)", p.Text, err)
	}
}

func TestPromptServiceComesLater(t *testing.T) {
	e := newEnv(t, false)
	e.register(t, "demo", &tagProvider{tag: "demo"})
	a := ctxtest.Layer("a", server("docs", &tagProvider{tag: "docs"}))
	ctxtest.Mount(t, e.root, a, nil)
	ctxtest.Settle(t, e.root)
	ac := active(t, ctxtest.Only(t, e.root, a))

	for range 2 { // mounted, removed, mounted again
		s := ctxtest.MountActive(t, e.root, sysprompt.Plugin, nil)
		ctxtest.Settle(t, e.root)
		sp, ok := sysprompt.Key.Get(e.root)
		if !ok {
			t.Fatal("no prompt service")
		}
		requireSection(t, sp, e.root, `["demo"]`)
		requireSection(t, sp, ac, `["demo","docs"]`)
		if err := s.Dispose(ctxtest.Wait(t)); err != nil {
			t.Fatal(err)
		}
		ctxtest.Settle(t, e.root)
		// The sections left with the service: nothing of them stays in the layers' effects.
		for _, sc := range []*ctx.Scope{e.root.Scope(), ctxtest.Only(t, e.root, a)} {
			for _, fx := range sc.Effects() {
				if strings.HasPrefix(fx.Label, "systemPrompt:") {
					t.Fatalf("%s keeps the effect %q after the prompt service went", sc, fx.Label)
				}
			}
		}
	}
	// The tools never depended on the prompt.
	e.requireTools(t, e.root, true)
}

func TestPromptSectionConflict(t *testing.T) {
	e := newEnv(t, true)
	// Someone else holds the section's name in the root layer: the resources service logs
	// it and its tools work regardless.
	other, err := e.prompt.Register(e.root, sysprompt.Section{Name: mcpresources.SectionName, Order: 1, Text: "theirs"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := e.svc.Register(e.root, "demo", &tagProvider{tag: "demo"})
	if err != nil {
		t.Fatalf("Register with the section name taken: %v", err)
	}
	e.requireTools(t, e.root, true)
	if got := e.answeredBy(t, e.root, "demo"); got != "demo" {
		t.Fatalf("answered by %q", got)
	}
	warned := false
	for _, r := range e.log.Records(slog.LevelWarn) {
		warned = warned || strings.Contains(r.Message, "prompt section")
	}
	if !warned {
		t.Fatalf("no warning about the section; log:\n%s", e.log.String())
	}
	if p, _ := e.prompt.Assemble(e.root, nil); p.Text != "theirs" {
		t.Fatalf("prompt %q", p.Text)
	}
	dispose(t, d)
	dispose(t, other)
}
