package sysprompt_test

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
	"github.com/cordisgo/harness/plugins/sysprompt"
)

// --- helpers -------------------------------------------------------------------------------

// mountService mounts the plugin on root and returns the service it provides.
func mountService(t *testing.T, root *ctx.Context, cfg any) *sysprompt.Service {
	t.Helper()
	return ctxtest.MountService(t, root, sysprompt.Plugin, cfg, sysprompt.Key)
}

// sections is a plugin that registers secs through its own context; own puts them into its
// own scope's layer.
func sections(name string, own bool, secs ...sysprompt.Section) ctx.PluginDef {
	return ctx.Define(ctx.Meta{Name: name, Inject: []ctx.Dependency{sysprompt.Key}}, func(c *ctx.Context, _ struct{}) error {
		sp := sysprompt.Key.Use(c)
		rc := c
		if own {
			rc = c.Layered()
		}
		for _, s := range secs {
			if _, err := sp.Register(rc, s); err != nil {
				return err
			}
		}
		return nil
	})
}

func mountAll(c *ctx.Context, children ...ctx.PluginDef) error {
	for _, ch := range children {
		if _, err := c.Plugin(ch, nil); err != nil {
			return err
		}
	}
	return nil
}

// child returns the live child scope of parent named name.
func child(t *testing.T, root *ctx.Context, parent *ctx.Scope, def ctx.PluginDef) *ctx.Scope {
	t.Helper()
	for _, s := range root.Registry().Scopes(def) {
		if s.Parent() == parent {
			return s
		}
	}
	t.Fatalf("no scope of %s under %s", def.Name(), parent)
	return nil
}

func assemble(t *testing.T, svc *sysprompt.Service, c *ctx.Context, vars map[string]string) *sysprompt.Prompt {
	t.Helper()
	p, err := svc.Assemble(c, vars)
	if err != nil {
		t.Fatalf("assemble: %v", err)
	}
	checkOffsets(t, p)
	return p
}

func checkOffsets(t testing.TB, p *sysprompt.Prompt) {
	t.Helper()
	for _, r := range p.Sections {
		if r.Start < 0 || r.End > len(p.Text) || r.Start >= r.End || p.Text[r.Start:r.End] != r.Text {
			t.Fatalf("section %q: offsets [%d,%d) do not give its text %q in %q", r.Name, r.Start, r.End, r.Text, p.Text)
		}
	}
}

func names(p *sysprompt.Prompt) []string {
	out := make([]string, len(p.Sections))
	for i, r := range p.Sections {
		out[i] = r.Name
	}
	return out
}

func static(name string, order int, text string) sysprompt.Section {
	return sysprompt.Section{Name: name, Order: order, Text: text}
}

// --- ordering ------------------------------------------------------------------------------

func TestOrdering(t *testing.T) {
	tests := []struct {
		name string
		secs []sysprompt.Section
		want []string
	}{
		{"by order", []sysprompt.Section{static("c", 3, "C"), static("a", 1, "A"), static("b", 2, "B")}, []string{"a", "b", "c"}},
		{"negative first", []sysprompt.Section{static("z", 0, "Z"), static("y", -5, "Y")}, []string{"y", "z"}},
		{"ties by name", []sysprompt.Section{static("b", 1, "B"), static("a", 1, "A"), static("c", 0, "C")}, []string{"c", "a", "b"}},
		{"byte order, upper before lower", []sysprompt.Section{static("a", 0, "a"), static("B", 0, "B"), static("_", 0, "_")}, []string{"B", "_", "a"}},
		{"resource list before server instructions", []sysprompt.Section{
			static("mcp:zeta", sysprompt.OrderMCPServers, "z"), static("mcp:alpha", sysprompt.OrderMCPServers, "a"),
			static("mcp-resource-servers", sysprompt.OrderMCPServers, "r"),
		}, []string{"mcp-resource-servers", "mcp:alpha", "mcp:zeta"}},
		{"prefix sorts first", []sysprompt.Section{static("ab", 0, "2"), static("a", 0, "1")}, []string{"a", "ab"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := ctxtest.New(t)
			svc := sysprompt.New(sysprompt.Config{})
			// Register in reverse so registration order cannot explain the result.
			for _, s := range slices.Backward(tt.secs) {
				if _, err := svc.Register(root, s); err != nil {
					t.Fatal(err)
				}
			}
			for range 2 { // the second assembly comes from the cache
				if got := names(assemble(t, svc, root, nil)); !slices.Equal(got, tt.want) {
					t.Fatalf("order %v, want %v", got, tt.want)
				}
			}
		})
	}
}

// --- interpolation -------------------------------------------------------------------------

func TestInterpolation(t *testing.T) {
	ada := map[string]string{"user": "Ada"}
	render := func(s string) func(*sysprompt.Assembly) (string, error) {
		return func(*sysprompt.Assembly) (string, error) { return s, nil }
	}
	tests := []struct {
		name    string
		sec     sysprompt.Section
		vars    map[string]string
		want    string
		wantErr error    // from Assemble
		errHas  []string // substrings of the Assemble error
	}{
		{name: "set", sec: sysprompt.Section{Text: "Hello {{user}}!", Interpolate: true}, vars: ada, want: "Hello Ada!"},
		{name: "spaces inside braces", sec: sysprompt.Section{Text: "[{{ user }}]", Interpolate: true}, vars: ada, want: "[Ada]"},
		{name: "repeated and dotted", sec: sysprompt.Section{Text: "{{user}}/{{agent.name}}/{{user}}", Interpolate: true},
			vars: map[string]string{"user": "u", "agent.name": "a"}, want: "u/a/u"},
		{name: "empty value is set", sec: sysprompt.Section{Text: "x{{user}}y", Interpolate: true}, vars: map[string]string{"user": ""}, want: "xy"},
		{name: "missing", sec: sysprompt.Section{Text: "Hello {{user}}", Interpolate: true}, vars: map[string]string{"other": "x"},
			wantErr: sysprompt.ErrMissingVariable, errHas: []string{`section "s"`, `owner "root"`, `variable "user"`}},
		{name: "missing with nil vars", sec: sysprompt.Section{Text: "{{user}}", Interpolate: true},
			wantErr: sysprompt.ErrMissingVariable, errHas: []string{`variable "user"`}},
		{name: "escaped braces", sec: sysprompt.Section{Text: `use \{{user}} literally`, Interpolate: true}, want: "use {{user}} literally"},
		{name: "escaped backslash", sec: sysprompt.Section{Text: `C:\\{{user}}`, Interpolate: true}, vars: ada, want: `C:\Ada`},
		{name: "lone closing braces", sec: sysprompt.Section{Text: "a }} b {", Interpolate: true}, want: "a }} b {"},
		{name: "values are not re-expanded", sec: sysprompt.Section{Text: "{{user}}", Interpolate: true},
			vars: map[string]string{"user": "{{other}}"}, want: "{{other}}"},
		{name: "verbatim braces", sec: sysprompt.Section{Text: "{{user}} {{ unclosed {{}} \\{{x}}"}, want: "{{user}} {{ unclosed {{}} \\{{x}}"},
		{name: "verbatim ignores vars", sec: sysprompt.Section{Text: "{{user}}"}, vars: ada, want: "{{user}}"},
		{name: "render interpolated", sec: sysprompt.Section{Render: render("Hi {{user}}"), Interpolate: true}, vars: ada, want: "Hi Ada"},
		{name: "render verbatim", sec: sysprompt.Section{Render: render("{{user}} {{")}, vars: ada, want: "{{user}} {{"},
		{name: "render malformed", sec: sysprompt.Section{Render: render("oops {{user"), Interpolate: true}, vars: ada,
			wantErr: sysprompt.ErrTemplate, errHas: []string{`section "s"`, "byte 5"}},
		{name: "render missing", sec: sysprompt.Section{Render: render("{{who}}"), Interpolate: true}, vars: ada,
			wantErr: sysprompt.ErrMissingVariable, errHas: []string{`variable "who"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := ctxtest.New(t)
			svc := sysprompt.New(sysprompt.Config{})
			sec := tt.sec
			sec.Name = "s"
			if _, err := svc.Register(root, sec); err != nil {
				t.Fatal(err)
			}
			for range 2 { // the second run hits the caches (view, parsed Render output)
				p, err := svc.Assemble(root, tt.vars)
				if tt.wantErr != nil {
					var se *sysprompt.SectionError
					if !errors.Is(err, tt.wantErr) || !errors.As(err, &se) || se.Section != "s" || se.Owner != "root" {
						t.Fatalf("err %v, want %v in a SectionError", err, tt.wantErr)
					}
					for _, s := range tt.errHas {
						if !strings.Contains(err.Error(), s) {
							t.Fatalf("error %q does not mention %q", err, s)
						}
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if p.Text != tt.want {
					t.Fatalf("text %q, want %q", p.Text, tt.want)
				}
			}
		})
	}
}

func TestMalformedTemplateRejectedAtRegistration(t *testing.T) {
	tests := []struct{ text, has string }{
		{"{{user", `"{{" at byte 0 is not closed`},
		{"ok {{}}", `reference "{{}}" at byte 3`},
		{"{{ a b }}", `reference "{{ a b }}"`},
		{"{{a{{b}}", `reference "{{a{{b}}"`},
		{"{{" + strings.Repeat("x", 129) + "}}", "at byte 0"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			root := ctxtest.New(t)
			svc := sysprompt.New(sysprompt.Config{})
			_, err := svc.Register(root, sysprompt.Section{Name: "bad", Text: tt.text, Interpolate: true})
			if !errors.Is(err, sysprompt.ErrTemplate) || !strings.Contains(err.Error(), tt.has) || !strings.Contains(err.Error(), `section "bad"`) {
				t.Fatalf("err %v, want ErrTemplate mentioning %q", err, tt.has)
			}
			// Nothing was registered: the name is free.
			if _, err := svc.Register(root, static("bad", 0, "fine")); err != nil {
				t.Fatal(err)
			}
			if len(root.Scope().Effects()) != 1 {
				t.Fatalf("effects left behind: %v", root.Scope().Effects())
			}
		})
	}
}

// --- empty sections ------------------------------------------------------------------------

func TestEmptySectionsDropped(t *testing.T) {
	empty := func(*sysprompt.Assembly) (string, error) { return "", nil }
	tests := []struct {
		name  string
		secs  []sysprompt.Section
		want  string
		names []string
	}{
		{"middle", []sysprompt.Section{static("a", 1, "A"), static("b", 2, ""), static("c", 3, "C")}, "A\n\nC", []string{"a", "c"}},
		{"first", []sysprompt.Section{static("a", 1, ""), static("b", 2, "B")}, "B", []string{"b"}},
		{"last", []sysprompt.Section{static("a", 1, "A"), static("b", 2, "")}, "A", []string{"a"}},
		{"white space only", []sysprompt.Section{static("a", 1, " \n\t"), static("b", 2, "B"), static("c", 3, "\n")}, "B", []string{"b"}},
		{"render empty", []sysprompt.Section{{Name: "a", Render: empty}, static("b", 2, "B"), {Name: "c", Order: 3, Render: empty}}, "B", []string{"b"}},
		{"interpolated to empty", []sysprompt.Section{{Name: "a", Text: "{{v}}", Interpolate: true}, static("b", 2, "B")}, "B", []string{"b"}},
		{"all empty", []sysprompt.Section{static("a", 1, ""), {Name: "b", Render: empty}}, "", []string{}},
		{"none", nil, "", []string{}},
		{"inner white space kept", []sysprompt.Section{static("a", 1, "  A  "), static("b", 2, "\nB\n")}, "  A  \n\n\nB\n", []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := ctxtest.New(t)
			svc := sysprompt.New(sysprompt.Config{})
			for _, s := range tt.secs {
				if _, err := svc.Register(root, s); err != nil {
					t.Fatal(err)
				}
			}
			p := assemble(t, svc, root, map[string]string{"v": ""})
			if p.Text != tt.want || !slices.Equal(names(p), tt.names) {
				t.Fatalf("text %q sections %v, want %q %v", p.Text, names(p), tt.want, tt.names)
			}
		})
	}
}

// --- attribution and offsets ---------------------------------------------------------------

func TestAttributionAndOffsets(t *testing.T) {
	root := ctxtest.New(t)
	svc := mountService(t, root, map[string]any{"preamble": "You are a harness.", "separator": "\n---\n"})
	ctxtest.MountActive(t, root, sections("alpha", false, static("alpha", 10, "Alpha text.")), nil)
	ctxtest.MountActive(t, root, sections("beta", false,
		sysprompt.Section{Name: "beta", Order: 20, Render: func(a *sysprompt.Assembly) (string, error) { return "Beta for " + a.Vars["who"], nil }},
	), nil)
	p := assemble(t, svc, root, map[string]string{"who": "Ada"})
	const want = "You are a harness.\n---\nAlpha text.\n---\nBeta for Ada"
	if p.Text != want {
		t.Fatalf("text %q, want %q", p.Text, want)
	}
	wantSecs := []sysprompt.Rendered{
		{Name: sysprompt.PreambleSection, Owner: "sysprompt", Order: sysprompt.OrderPreamble, Start: 0, End: 18, Text: "You are a harness."},
		{Name: "alpha", Owner: "alpha", Order: 10, Start: 23, End: 34, Text: "Alpha text."},
		{Name: "beta", Owner: "beta", Order: 20, Start: 39, End: 51, Text: "Beta for Ada"},
	}
	if !slices.Equal(p.Sections, wantSecs) {
		t.Fatalf("sections\n%+v\nwant\n%+v", p.Sections, wantSecs)
	}
}

// --- duplicates and shadowing --------------------------------------------------------------

func TestDuplicateInOneLayer(t *testing.T) {
	root := ctxtest.New(t)
	mountService(t, root, nil)
	one := ctxtest.MountActive(t, root, sections("one", false, static("shared", 1, "from one")), nil)
	two := ctxtest.Mount(t, root, sections("two", false, static("shared", 1, "from two")), nil)
	ctxtest.Settle(t, root)
	ctxtest.RequireState(t, two, ctx.Failed)
	err := two.Err()
	if !errors.Is(err, sysprompt.ErrDuplicateSection) {
		t.Fatalf("err %v, want ErrDuplicateSection", err)
	}
	for _, s := range []string{`"shared"`, one.String(), two.String(), `layer of scope "root"`} {
		if !strings.Contains(err.Error(), s) {
			t.Fatalf("error %q does not mention %s", err, s)
		}
	}
	// Once the first owner is gone the name is free again.
	if err := one.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	if err := two.Restart(ctxtest.Wait(t)); err != nil {
		t.Fatalf("restart after the first owner left: %v", err)
	}
}

func TestDuplicateFromRoot(t *testing.T) {
	root := ctxtest.New(t)
	svc := sysprompt.New(sysprompt.Config{})
	if _, err := svc.Register(root, static("x", 0, "a")); err != nil {
		t.Fatal(err)
	}
	_, err := svc.Register(root, static("x", 5, "b"))
	if !errors.Is(err, sysprompt.ErrDuplicateSection) || strings.Count(err.Error(), `scope "root" #0`) != 3 {
		t.Fatalf("err %v", err)
	}
	// The failed registration left no effect behind and the first one is intact.
	if n := len(root.Scope().Effects()); n != 1 {
		t.Fatalf("%d effects, want 1", n)
	}
	if p := assemble(t, svc, root, nil); p.Text != "a" {
		t.Fatalf("text %q", p.Text)
	}
}

func TestShadowingNearestWins(t *testing.T) {
	root := ctxtest.New(t)
	svc := mountService(t, root, nil)
	ctxtest.MountActive(t, root, sections("global", false, static("rules", 5, "global rules"), static("other", 6, "other")), nil)
	inner := sections("inner", false, static("rules", 1, "agent rules"))
	agentDef := ctxtest.Layer("agent", inner)
	agent := ctxtest.MountActive(t, root, agentDef, nil)
	ctxtest.Settle(t, root)

	p := assemble(t, svc, agent.Context(), nil)
	if p.Text != "agent rules\n\nother" || p.Sections[0].Owner != "inner" || p.Sections[0].Order != 1 {
		t.Fatalf("agent sees %q %+v", p.Text, p.Sections)
	}
	if p := assemble(t, svc, root, nil); p.Text != "global rules\n\nother" {
		t.Fatalf("root sees %q", p.Text)
	}
	// Removing the nearer section uncovers the outer one.
	if err := child(t, root, agent, inner).Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	if p := assemble(t, svc, agent.Context(), nil); p.Text != "global rules\n\nother" || p.Sections[0].Owner != "global" {
		t.Fatalf("after removing the override the agent sees %q", p.Text)
	}
}

// --- scoped visibility ---------------------------------------------------------------------

func TestScopedVisibility(t *testing.T) {
	root := ctxtest.New(t)
	svc := mountService(t, root, map[string]any{"preamble": "P"})
	global := sections("global", false, static("g", 0, "global"))
	mcpA := sections("mcpA", false, static("mcp:a", 3100, "tools of A"))
	mcpA2 := sections("mcpA2", false, static("mcp:a2", 3100, "tools of A2"), static("g", 0, "global, as A2 sees it"))
	personaA := sections("personaA", true, static("persona", 100, "I am agent A's helper"))
	agentA2 := ctxtest.Layer("agentA2", mcpA2)
	// Agent A's own plugin adds a section for its subtree only, then mounts its rows.
	agentA := ctx.Define(ctx.Meta{Name: "agentA", Inject: []ctx.Dependency{sysprompt.Key}}, func(c *ctx.Context, _ struct{}) error {
		agent := c.Layered()
		if _, err := sysprompt.Key.Use(c).Register(agent, static("role", 50, "You review code.")); err != nil {
			return err
		}
		return mountAll(agent, mcpA, personaA, agentA2)
	})
	mcpB := sections("mcpB", false, static("mcp:b", 3100, "tools of B"))
	agentB := ctxtest.Layer("agentB", mcpB)

	ctxtest.MountActive(t, root, global, nil)
	a := ctxtest.MountActive(t, root, agentA, nil)
	b := ctxtest.MountActive(t, root, agentB, nil)
	ctxtest.Settle(t, root)
	a2 := child(t, root, a, agentA2)
	pA := child(t, root, a, personaA)
	mA := child(t, root, a, mcpA)

	tests := []struct {
		name string
		from *ctx.Context
		want []string
	}{
		{"root", root, []string{sysprompt.PreambleSection, "g"}},
		{"agent A", a.Context(), []string{sysprompt.PreambleSection, "g", "role", "mcp:a"}},
		{"plugin in A (sibling of mcpA)", mA.Context(), []string{sysprompt.PreambleSection, "g", "role", "mcp:a"}},
		{"persona plugin (own layer)", pA.Context(), []string{sysprompt.PreambleSection, "g", "role", "persona", "mcp:a"}},
		{"nested agent A2", a2.Context(), []string{sysprompt.PreambleSection, "g", "role", "mcp:a", "mcp:a2"}},
		{"agent B", b.Context(), []string{sysprompt.PreambleSection, "g", "mcp:b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := names(assemble(t, svc, tt.from, nil)); !slices.Equal(got, tt.want) {
				t.Fatalf("sections %v, want %v", got, tt.want)
			}
		})
	}
	if p := assemble(t, svc, a2.Context(), nil); !strings.HasPrefix(p.Text, "P\n\nglobal, as A2 sees it\n\n") {
		t.Fatalf("nested agent text %q", p.Text)
	}
}

// --- lifecycle -----------------------------------------------------------------------------

func TestDisposalOnScopeUnload(t *testing.T) {
	root := ctxtest.New(t)
	svc := mountService(t, root, nil)
	rec := ctxtest.Record(t, root, sysprompt.Changed)
	def := sections("p", false, static("a", 1, "A"), static("b", 2, "B"))
	s := ctxtest.MountActive(t, root, def, nil)
	if p := assemble(t, svc, root, nil); p.Text != "A\n\nB" {
		t.Fatalf("text %q", p.Text)
	}
	// A restart removes and re-adds: no duplicate error, the sections are there once.
	if err := s.Restart(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	if p := assemble(t, svc, root, nil); p.Text != "A\n\nB" {
		t.Fatalf("after restart %q", p.Text)
	}
	stale := s.Context()
	if err := s.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	if p := assemble(t, svc, root, nil); p.Text != "" || len(p.Sections) != 0 {
		t.Fatalf("after dispose %q", p.Text)
	}
	if _, err := svc.Register(stale, static("late", 0, "x")); !errors.Is(err, ctx.ErrInactive) {
		t.Fatalf("register through an unloaded context: %v", err)
	}
	var kinds []string
	for _, ch := range rec.Events() {
		if ch.Owner == s {
			kinds = append(kinds, ch.Kind.String()+":"+ch.Section)
		}
	}
	// Registration order, then removal newest first, twice.
	want := []string{"added:a", "added:b", "removed:b", "removed:a", "added:a", "added:b", "removed:b", "removed:a"}
	if !slices.Equal(kinds, want) {
		t.Fatalf("changes %v, want %v", kinds, want)
	}
}

func TestDisposerIdempotent(t *testing.T) {
	root := ctxtest.New(t)
	svc := sysprompt.New(sysprompt.Config{})
	rec := ctxtest.Record(t, root, sysprompt.Changed)
	d, err := svc.Register(root, static("a", 0, "A"))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := d(ctxtest.Wait(t)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(rec.Events()); n != 2 {
		t.Fatalf("%d events, want added+removed", n)
	}
	if p := assemble(t, svc, root, nil); p.Text != "" {
		t.Fatalf("text %q", p.Text)
	}
}

// --- handles and change events ------------------------------------------------------------

func TestHandleAndChangeEvents(t *testing.T) {
	root := ctxtest.New(t)
	svc := mountService(t, root, nil)
	rec := ctxtest.Record(t, root, sysprompt.Changed)
	var h *sysprompt.Handle
	def := ctx.Define(ctx.Meta{Name: "mcp", Inject: []ctx.Dependency{sysprompt.Key}}, func(c *ctx.Context, _ struct{}) error {
		var err error
		h, err = sysprompt.Key.Use(c).Set(c, sysprompt.Section{Name: "mcp:demo", Order: sysprompt.OrderMCPServers})
		return err
	})
	s := ctxtest.MountActive(t, root, def, nil)
	if p := assemble(t, svc, root, nil); p.Text != "" {
		t.Fatalf("empty instructions must not render: %q", p.Text)
	}
	if err := h.SetText("### MCP server: demo\n\nUse {{braces}} freely."); err != nil {
		t.Fatal(err)
	}
	if err := h.SetText(h.Text()); err != nil { // no change, no event
		t.Fatal(err)
	}
	if p := assemble(t, svc, root, nil); p.Text != "### MCP server: demo\n\nUse {{braces}} freely." || p.Sections[0].Owner != "mcp" {
		t.Fatalf("text %q", p.Text)
	}
	if err := h.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	if err := h.SetText("again"); !errors.Is(err, sysprompt.ErrDisposed) {
		t.Fatalf("SetText after dispose: %v", err)
	}
	var got []sysprompt.Change
	for _, ch := range rec.Events() {
		if ch.Section == "mcp:demo" {
			got = append(got, ch)
		}
	}
	if len(got) != 3 || got[0].Kind != sysprompt.Added || got[1].Kind != sysprompt.Updated || got[2].Kind != sysprompt.Removed {
		t.Fatalf("changes %+v", got)
	}
	for _, ch := range got {
		if ch.Owner != s || ch.Layer != root.Scope() || ch.Service != svc {
			t.Fatalf("change attribution %+v", ch)
		}
	}
}

func TestHandleErrors(t *testing.T) {
	root := ctxtest.New(t)
	svc := sysprompt.New(sysprompt.Config{})
	dyn, err := svc.Set(root, sysprompt.Section{Name: "dyn", Render: func(*sysprompt.Assembly) (string, error) { return "d", nil }})
	if err != nil {
		t.Fatal(err)
	}
	if err := dyn.SetText("x"); !errors.Is(err, sysprompt.ErrInvalidSection) {
		t.Fatalf("SetText on a rendered section: %v", err)
	}
	tmpl, err := svc.Set(root, sysprompt.Section{Name: "tmpl", Order: 1, Text: "hi {{u}}", Interpolate: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := tmpl.SetText("broken {{"); !errors.Is(err, sysprompt.ErrTemplate) || !strings.Contains(err.Error(), `"tmpl"`) {
		t.Fatalf("malformed SetText: %v", err)
	}
	if p := assemble(t, svc, root, map[string]string{"u": "U"}); p.Text != "d\n\nhi U" || tmpl.Text() != "hi {{u}}" || tmpl.Name() != "tmpl" {
		t.Fatalf("the old text must stay: %q", p.Text)
	}
}

// --- errors from rendering -----------------------------------------------------------------

func TestRenderErrors(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name   string
		render func(*sysprompt.Assembly) (string, error)
		check  func(error) bool
	}{
		{"error", func(*sysprompt.Assembly) (string, error) { return "", boom }, func(err error) bool { return errors.Is(err, boom) }},
		{"panic", func(*sysprompt.Assembly) (string, error) { panic("kaboom") }, func(err error) bool {
			var pe *ctx.PanicError
			return errors.As(err, &pe) && pe.Value == "kaboom" && len(pe.Stack) > 0
		}},
		{"panic with error", func(*sysprompt.Assembly) (string, error) { panic(boom) }, func(err error) bool { return errors.Is(err, boom) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := ctxtest.New(t)
			svc := mountService(t, root, nil)
			ctxtest.MountActive(t, root, sections("fine", false, static("a", 0, "A")), nil)
			ctxtest.MountActive(t, root, sections("faulty", false, sysprompt.Section{Name: "bad", Order: 1, Render: tt.render}), nil)
			p, err := svc.Assemble(root, nil)
			var se *sysprompt.SectionError
			if p != nil || !errors.As(err, &se) || se.Section != "bad" || se.Owner != "faulty" || !tt.check(err) {
				t.Fatalf("prompt %v err %v", p, err)
			}
			if !strings.Contains(err.Error(), `section "bad" (owner "faulty")`) {
				t.Fatalf("message %q", err)
			}
			// The service keeps working.
			if _, err := svc.Assemble(root, nil); err == nil {
				t.Fatal("the faulty section still fails")
			}
		})
	}
}

func TestRenderSeesCallerAndVars(t *testing.T) {
	root := ctxtest.New(t)
	svc := mountService(t, root, nil)
	var mu sync.Mutex
	var seen []*ctx.Scope
	ctxtest.MountActive(t, root, sections("who", false, sysprompt.Section{Name: "who", Render: func(a *sysprompt.Assembly) (string, error) {
		mu.Lock()
		seen = append(seen, a.Caller.Scope())
		mu.Unlock()
		return fmt.Sprintf("caller=%s lang=%s", a.Caller.Scope().Name(), a.Vars["lang"]), nil
	}}), nil)
	agent := ctxtest.MountActive(t, root, ctxtest.Layer("agent"), nil)
	for _, c := range []*ctx.Context{root, agent.Context()} {
		p := assemble(t, svc, c, map[string]string{"lang": "go"})
		if want := "caller=" + c.Scope().Name() + " lang=go"; p.Text != want {
			t.Fatalf("text %q, want %q", p.Text, want)
		}
	}
	if !slices.Equal(seen, []*ctx.Scope{root.Scope(), agent}) {
		t.Fatalf("callers %v", seen)
	}
}

// --- validation ----------------------------------------------------------------------------

func TestSectionValidation(t *testing.T) {
	render := func(*sysprompt.Assembly) (string, error) { return "", nil }
	tests := []struct {
		name string
		sec  sysprompt.Section
		ok   bool
	}{
		{"all allowed characters", sysprompt.Section{Name: "aZ09_:./-"}, true},
		{"128 characters", sysprompt.Section{Name: strings.Repeat("n", 128)}, true},
		{"empty static text", sysprompt.Section{Name: "e"}, true},
		{"render only", sysprompt.Section{Name: "r", Render: render}, true},
		{"empty name", sysprompt.Section{}, false},
		{"129 characters", sysprompt.Section{Name: strings.Repeat("n", 129)}, false},
		{"space", sysprompt.Section{Name: "a b"}, false},
		{"non-ASCII", sysprompt.Section{Name: "café"}, false},
		{"braces", sysprompt.Section{Name: "{x}"}, false},
		{"text and render", sysprompt.Section{Name: "both", Text: "t", Render: render}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := ctxtest.New(t)
			svc := sysprompt.New(sysprompt.Config{})
			_, err := svc.Register(root, tt.sec)
			if tt.ok != (err == nil) {
				t.Fatalf("err %v, want ok=%v", err, tt.ok)
			}
			if err != nil && (!errors.Is(err, sysprompt.ErrInvalidSection) || !strings.Contains(err.Error(), `owner "root"`)) {
				t.Fatalf("err %v", err)
			}
		})
	}
}

// --- configuration -------------------------------------------------------------------------

func TestConfig(t *testing.T) {
	tests := []struct {
		name string
		raw  any
		err  string // substring of the decode error; "" means valid
		want sysprompt.Config
	}{
		{"defaults", nil, "", sysprompt.Config{Separator: "\n\n"}},
		{"all keys", map[string]any{"preamble": "Hi {{u}}", "interpolate": true, "separator": "\n"}, "", sysprompt.Config{Preamble: "Hi {{u}}", Interpolate: true, Separator: "\n"}},
		{"empty separator", map[string]any{"separator": ""}, `key "separator": must not be empty`, sysprompt.Config{}},
		{"unknown key", map[string]any{"sections": 1}, `key "sections": unknown key`, sysprompt.Config{}},
		{"wrong type", map[string]any{"preamble": 3}, `key "preamble": expected a string`, sysprompt.Config{}},
		{"malformed interpolated preamble", map[string]any{"preamble": "{{", "interpolate": true}, `key "preamble": invalid template`, sysprompt.Config{}},
		{"braces in a verbatim preamble", map[string]any{"preamble": "{{"}, "", sysprompt.Config{Preamble: "{{", Separator: "\n\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sysprompt.Plugin.DecodeConfig(tt.raw)
			if tt.err != "" {
				var ce *ctx.ConfigError
				if !errors.As(err, &ce) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want a ConfigError containing %q", err, tt.err)
				}
				return
			}
			if err != nil || got.(sysprompt.Config) != tt.want {
				t.Fatalf("got %+v, %v", got, err)
			}
		})
	}
}

func TestPreambleUpdatedInPlace(t *testing.T) {
	root := ctxtest.New(t)
	prompt := ctxtest.MountActive(t, root, sysprompt.Plugin, map[string]any{"preamble": "v1"})
	svc, _ := sysprompt.Key.Get(root)
	dep := ctxtest.MountActive(t, root, sections("dep", false, static("dep", 0, "D")), nil)
	states := ctxtest.Transitions(t, root, dep)
	rec := ctxtest.Record(t, root, sysprompt.Changed)

	if err := prompt.Update(map[string]any{"preamble": "v2"}); err != nil {
		t.Fatal(err)
	}
	ctxtest.Settle(t, root)
	if got, _ := sysprompt.Key.Get(root); got != svc || len(states.States()) != 0 {
		t.Fatalf("a preamble change restarted the service or its dependents: %v", states.States())
	}
	if p := assemble(t, svc, root, nil); p.Text != "v2\n\nD" {
		t.Fatalf("text %q", p.Text)
	}
	if ev := rec.Events(); len(ev) != 1 || ev[0].Kind != sysprompt.Updated || ev[0].Section != sysprompt.PreambleSection {
		t.Fatalf("changes %+v", ev)
	}
	if err := prompt.Update(map[string]any{"preamble": ""}); err != nil {
		t.Fatal(err)
	}
	if p := assemble(t, svc, root, nil); p.Text != "D" {
		t.Fatalf("an empty preamble is dropped: %q", p.Text)
	}

	// Another separator restarts the plugin: a new service, and the dependent follows it.
	if err := prompt.Update(map[string]any{"preamble": "v3", "separator": " | "}); err != nil {
		t.Fatal(err)
	}
	ctxtest.Settle(t, root)
	ctxtest.RequireState(t, dep, ctx.Active)
	svc2, _ := sysprompt.Key.Get(root)
	if svc2 == svc {
		t.Fatal("the service was not replaced")
	}
	if p := assemble(t, svc2, root, nil); p.Text != "v3 | D" {
		t.Fatalf("text %q", p.Text)
	}
	// An invalid update is refused and changes nothing.
	if err := prompt.Update(map[string]any{"separator": ""}); err == nil {
		t.Fatal("empty separator accepted")
	}
}

func TestInterpolatedPreamble(t *testing.T) {
	root := ctxtest.New(t)
	svc := mountService(t, root, map[string]any{"preamble": "You help {{user}}.", "interpolate": true})
	if p := assemble(t, svc, root, map[string]string{"user": "Ada"}); p.Text != "You help Ada." {
		t.Fatalf("text %q", p.Text)
	}
	if _, err := svc.Assemble(root, nil); !errors.Is(err, sysprompt.ErrMissingVariable) || !strings.Contains(err.Error(), `owner "sysprompt"`) {
		t.Fatalf("err %v", err)
	}
}

// --- concurrency ---------------------------------------------------------------------------

func TestConcurrentAssembleAndChanges(t *testing.T) {
	root := ctxtest.New(t)
	svc := mountService(t, root, nil)
	agent := ctxtest.MountActive(t, root, ctxtest.Layer("agent"), nil)
	h, err := svc.Set(root, static("live", 0, "v0"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			c := root
			if i%2 == 1 {
				c = agent.Context()
			}
			for {
				select {
				case <-done:
					return
				default:
				}
				p, err := svc.Assemble(c, nil)
				if err != nil {
					t.Error(err)
					return
				}
				checkOffsets(t, p)
			}
		})
	}
	for i := range 200 {
		if err := h.SetText(fmt.Sprintf("v%d", i)); err != nil {
			t.Fatal(err)
		}
		d, err := svc.Register(agent.Context().Layered(), static(fmt.Sprintf("s%d", i%3), i, "x"))
		if err != nil {
			t.Fatal(err)
		}
		if err := d(ctxtest.Wait(t)); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	wg.Wait()
	if p := assemble(t, svc, agent.Context(), nil); p.Text != "v199" {
		t.Fatalf("text %q", p.Text)
	}
}

// A Render function and a listener may call back into the service: no lock is held.
func TestReentrancy(t *testing.T) {
	root := ctxtest.New(t)
	svc := sysprompt.New(sysprompt.Config{})
	var inner string
	if _, err := svc.Register(root, sysprompt.Section{Name: "outer", Render: func(a *sysprompt.Assembly) (string, error) {
		if _, ok := a.Vars["nested"]; ok {
			return "inner", nil
		}
		p, err := svc.Assemble(a.Caller, map[string]string{"nested": ""})
		if err != nil {
			return "", err
		}
		inner = p.Text
		return "outer", nil
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := sysprompt.Changed.On(root, func(ch sysprompt.Change) error {
		_, err := ch.Service.Assemble(root, map[string]string{"nested": ""})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Register(root, static("z", 1, "Z")); err != nil {
		t.Fatal(err)
	}
	if p := assemble(t, svc, root, nil); p.Text != "outer\n\nZ" || inner != "inner\n\nZ" {
		t.Fatalf("text %q inner %q", p.Text, inner)
	}
}

// Disposing the root removes every section, with no goroutine left behind.
func TestRootDispose(t *testing.T) {
	root := ctx.New(ctx.Options{})
	svc := sysprompt.New(sysprompt.Config{})
	if _, err := svc.Register(root, static("a", 0, "A")); err != nil {
		t.Fatal(err)
	}
	if err := root.Scope().Dispose(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p, err := svc.Assemble(root, nil); err != nil || p.Text != "" {
		t.Fatalf("after root dispose: %q %v", p.Text, err)
	}
}

// optional is a plugin that works without the prompt and follows the service from an Inject
// sub-scope, whose registrations land in the same layer as the plugin's own.
func optional(name string) ctx.PluginDef {
	return ctx.Define(ctx.Meta{Name: name}, func(c *ctx.Context, _ struct{}) error {
		_, err := c.Inject("", []ctx.Dependency{sysprompt.Key}, func(sub *ctx.Context) error {
			_, err := sysprompt.Key.Use(sub).Register(sub, static("mcp:"+name, sysprompt.OrderMCPServers, name+" instructions"))
			return err
		})
		return err
	})
}

func TestOptionalUserFollowsService(t *testing.T) {
	root := ctxtest.New(t)
	a := ctxtest.MountActive(t, root, ctxtest.Layer("agentA", optional("shared")), nil)
	b := ctxtest.MountActive(t, root, ctxtest.Layer("agentB"), nil)
	ctxtest.Settle(t, root)
	// Mounted after its users: their sub-scopes load when it appears.
	prompt := ctxtest.MountActive(t, root, sysprompt.Plugin, nil)
	ctxtest.Settle(t, root)

	for round := range 2 {
		svc, _ := sysprompt.Key.Get(root)
		pa := assemble(t, svc, a.Context(), nil)
		if got := names(pa); !slices.Equal(got, []string{"mcp:shared"}) || pa.Sections[0].Owner != "shared" {
			t.Fatalf("round %d: agent A sees %v %+v", round, got, pa.Sections)
		}
		for _, c := range []*ctx.Context{root, b.Context()} {
			if got := names(assemble(t, svc, c, nil)); len(got) != 0 {
				t.Fatalf("round %d: %s sees %v", round, c.Scope(), got)
			}
		}
		// A restarted service gets the sections again.
		if err := prompt.Restart(ctxtest.Wait(t)); err != nil {
			t.Fatal(err)
		}
		ctxtest.Settle(t, root)
		if again, _ := sysprompt.Key.Get(root); again == svc {
			t.Fatal("service not replaced")
		}
	}
}
