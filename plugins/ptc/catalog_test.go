package ptc_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/ptc"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// catalogTools are two servers' tools and one of the harness's own.
func catalogTools() []toolregistry.Info {
	return []toolregistry.Info{
		{Name: "mcp__gh__create_issue", Description: "Creates an issue. Needs a title.\nMore text.", Meta: map[string]string{"server": "gh"},
			Parameters:   json.RawMessage(`{"type":"object","properties":{"title":{"type":"string","description":"The title"},"labels":{"type":"array","items":{"type":"string"}},"meta":{"type":"object","properties":{"a/**b":{"type":"integer"}}}},"required":["title"]}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"number":{"type":"integer","description":"its number"}},"required":["number"]}`)},
		{Name: "mcp__gh__list_issues", Description: "Lists issues", Meta: map[string]string{"server": "gh", "readOnlyHint": "true"}},
		{Name: "mcp__fs__read", Description: strings.Repeat("very long purpose ", 20), Meta: map[string]string{"server": "fs", "readOnlyHint": "true"},
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		{Name: "local"},
		{Name: toolregistry.ReservedRunCode, Description: "never listed"},
	}
}

// The catalog's three forms, each chosen while it fits the budget.
func TestCatalogForms(t *testing.T) {
	tools := catalogTools()
	lines := ptc.Catalog(tools, 1<<20)
	long := strings.Repeat("very long purpose ", 20)[:159] + "…" // 160 characters at most
	members := lines[strings.Index(lines, "declare const tools: {"):]
	wantMembers := `declare const tools: {
  "local"(args?: unknown): Promise<ToolResult>;
  /** ` + long + ` (read-only) */
  "mcp__fs__read"(args: { path: string; }): Promise<ToolResult>;
  /** Creates an issue. */
  "mcp__gh__create_issue"(args: { title: string; labels?: string[]; meta?: { "a/**b"?: number; }; }): Promise<StructuredResult<{ number: number; }>>;
  /** Lists issues (read-only) */
  "mcp__gh__list_issues"(args?: unknown): Promise<ToolResult>;
};
`
	if members != wantMembers {
		t.Errorf("a line a tool:\n%s\nwant:\n%s", members, wantMembers)
	}
	for _, decl := range []string{"type ContentBlock =", "interface ToolResult<S = unknown>", "interface StructuredResult<S>", "declare class ToolCallError", "declare function describe(", "declare function sleep(", "declare const console:"} {
		if !strings.Contains(lines, decl) {
			t.Errorf("the catalog lacks %q", decl)
		}
	}
	if strings.Contains(lines, "run_code") || strings.Contains(lines, "never listed") {
		t.Error("run_code is in the catalog")
	}

	// Too small for a line a tool: the names by server.
	names := ptc.Catalog(tools, len(lines)-1)
	if !strings.Contains(names, " * fs: read\n * gh: create_issue, list_issues\n * harness: local\n") ||
		!strings.Contains(names, "declare const tools: Record<string, (args?: object) => Promise<ToolResult>>;") || strings.Contains(names, "(args: {") {
		t.Errorf("names by server:\n%s", names)
	}
	// Too small for the names: the servers.
	servers := ptc.Catalog(tools, len(names)-1)
	if !strings.Contains(servers, " * fs: 1 tools\n * gh: 2 tools\n * harness: 1 tools\n") || strings.Contains(servers, "create_issue") {
		t.Errorf("servers:\n%s", servers)
	}
	if len(servers) >= len(names) || len(names) >= len(lines) {
		t.Errorf("sizes %d, %d, %d", len(lines), len(names), len(servers))
	}
	// The same tools in another order give the same bytes; no tools give nothing.
	rev := append([]toolregistry.Info(nil), tools...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	if ptc.Catalog(rev, 1<<20) != lines || ptc.Catalog(rev, len(lines)-1) != names {
		t.Error("the order of the tools changed the catalog")
	}
	if ptc.Catalog(tools[len(tools)-1:], 1<<20) != "" {
		t.Error("a catalog of run_code only")
	}
}

// The section carries the catalog within the configured budget and says how to get more.
func TestSectionText(t *testing.T) {
	var cfg ptc.Config
	cfg.Default()
	text := ptc.SectionText(catalogTools(), cfg)
	if !strings.Contains(text, ptc.Catalog(catalogTools(), cfg.CatalogBytes)) || !strings.Contains(text, `describe("<name>")`) {
		t.Errorf("section:\n%s", text)
	}
	cfg.CatalogBytes = 10
	if text := ptc.SectionText(catalogTools(), cfg); !strings.Contains(text, "gh: 2 tools") {
		t.Errorf("section with a small budget:\n%s", text)
	}
	if ptc.SectionText(nil, cfg) != "" {
		t.Error("a section without tools")
	}
	cfg.CatalogBytes = 0
	var ce *ctx.ConfigError
	if err := cfg.Validate(); !errors.As(err, &ce) || ce.Key != "catalogBytes" {
		t.Errorf("a zero budget: %v", err)
	}
}

// describe returns a program the full declarations of the tools it names (or a prefix of
// their names), and refuses names that match nothing.
func TestDescribe(t *testing.T) {
	var tools []toolregistry.Tool
	for _, in := range catalogTools()[:4] {
		tl := textTool(in.Name, false, func(map[string]any) (string, error) { return "", nil })
		tl.Description, tl.Parameters, tl.OutputSchema, tl.Meta = in.Description, in.Parameters, in.OutputSchema, in.Meta
		tools = append(tools, tl)
	}
	e := newEnv(t, defaults(), tools...)
	out := e.run(`return describe("mcp__gh__*", "local")`)
	if out.Err != nil {
		t.Fatal(out.Err)
	}
	var text string
	_ = json.Unmarshal(out.Value, &text)
	full := ptc.Declarations(e.reg.List(e.root))
	for _, name := range []string{"local", "mcp__gh__create_issue", "mcp__gh__list_issues"} {
		if !strings.Contains(text, `"`+name+`"(args`) {
			t.Errorf("describe lacks %s:\n%s", name, text)
		}
	}
	if strings.Contains(text, "mcp__fs__read") || !strings.Contains(text, "/** The title */") || !strings.Contains(text, "/** its number */") || !strings.Contains(full, text[strings.Index(text, "  /**\n   * Creates"):]) {
		t.Errorf("describe:\n%s", text)
	}
	out = e.run(`return describe("mcp__nope")`)
	if out.Err == nil || !strings.Contains(out.Err.Msg, "describe: no tool matches mcp__nope") {
		t.Fatalf("an unknown name: %v", out.Err)
	}
}
