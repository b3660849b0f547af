package gateway_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/internal/demoserver"
	"github.com/cordisgo/harness/testkit/mcptest"
)

// The search route with the go-sdk client: a session starts with tool_search and
// call_tool (and the tools of no MCP server); a search adds the tools it found with their
// real schemas and says so with tools/list_changed; they are called directly, or through
// call_tool; another session's list is its own.
func TestSearchRoute(t *testing.T) {
	f := demoFleet(t)

	changed := make(chan string, 1)
	cs := connect(t, f.url+gateway.PathSearch, changed)
	if ins := cs.InitializeResult().Instructions; !strings.Contains(ins, "tool_search") {
		t.Errorf("instructions %q", ins)
	}
	names := toolNames(t, cs)
	if !slices.Contains(names, "tool_search") || !slices.Contains(names, gateway.CallToolName) || slices.Contains(names, "mcp__demo__add") {
		t.Fatalf("first list %v", names)
	}

	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "tool_search", Arguments: map[string]any{"query": "add two numbers", "limit": 2}})
	if err != nil || res.IsError {
		t.Fatalf("tool_search: %v %+v", err, res)
	}
	if got := text(res); !strings.Contains(got, "mcp__demo__add") || !strings.Contains(got, gateway.CallToolName) {
		t.Errorf("tool_search result %q", got)
	}
	waitTools(t, cs, changed, "mcp__demo__add")
	var add *mcp.Tool
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tool.Name == "mcp__demo__add" {
			add = tool
		}
	}
	schema, _ := json.Marshal(add.InputSchema)
	if !strings.Contains(string(schema), `"a"`) || !strings.Contains(string(schema), `"b"`) {
		t.Errorf("loaded add's schema %s", schema)
	}
	if res := callTool(t, cs, "mcp__demo__add", map[string]any{"a": 2, "b": 40}); !strings.Contains(text(res), "42") {
		t.Errorf("direct call: %q", text(res))
	}
	if res := callTool(t, cs, gateway.CallToolName, map[string]any{"name": "mcp__demo__echo", "arguments": map[string]any{"text": "through the entry"}}); text(res) != "through the entry" {
		t.Errorf("call_tool: %q", text(res))
	}
	// Arguments written as a JSON string, as models sometimes write them, are the object.
	if res := callTool(t, cs, gateway.CallToolName, map[string]any{"name": "mcp__demo__echo", "arguments": `{"text": "as a string"}`}); text(res) != "as a string" {
		t.Errorf("call_tool with its arguments as a string: %q", text(res))
	}
	if self, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: gateway.CallToolName, Arguments: map[string]any{"name": "tool_search"}}); err != nil || !self.IsError || !strings.Contains(text(self), "call tool_search directly") {
		t.Errorf("call_tool of tool_search: %v %q", err, text(self))
	}
	bad, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: gateway.CallToolName, Arguments: map[string]any{"name": "mcp__demo__add", "arguments": map[string]any{"a": "x"}}})
	if err != nil || !bad.IsError {
		t.Errorf("call_tool with invalid arguments: %v %+v", err, bad)
	}
	if none, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: gateway.CallToolName, Arguments: map[string]any{}}); err != nil || !none.IsError || !strings.Contains(text(none), `{"name": "<tool>"`) {
		t.Errorf("call_tool without a name: %v %q", err, text(none))
	}

	other := connect(t, f.url+gateway.PathSearch, nil)
	if names := toolNames(t, other); slices.Contains(names, "mcp__demo__add") {
		t.Errorf("another session lists the first one's found tools: %v", names)
	}
}

// callTool calls name and fails the test on a protocol error or a tool error.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %+v", name, err, res)
	}
	return res
}

// The search route ranks the servers' instructions with their tools: of two servers with the
// same tools, a query that only one's instructions answer finds that one's.
func TestSearchRouteRanksInstructions(t *testing.T) {
	root := newTree(t)
	mountHTTP(t, root, "demo", demoUpstream(t))
	vault := mcptest.NewHTTP(t, func() *mcp.Server {
		return demoserver.New(demoserver.Options{Instructions: "Keeps the quarterly zebrafish inventory."})
	})
	mountHTTP(t, root, "vault", vault.URL())
	f := serveGateway(t, root, gateway.Options{})
	cs := connect(t, f.url+gateway.PathSearch, nil)
	res := callTool(t, cs, "tool_search", map[string]any{"query": "zebrafish inventory", "limit": 3})
	if got := text(res); !strings.Contains(got, "mcp__vault__") || strings.Contains(got, "mcp__demo__") {
		t.Fatalf("tool_search for words of vault's instructions: %q", got)
	}
}

// tool_search on the search route takes several queries at once (the toolsearch tool's
// schema): one section per query, every hit added to the session's tools.
func TestSearchRouteSeveralQueries(t *testing.T) {
	f := demoFleet(t)
	changed := make(chan string, 1)
	cs := connect(t, f.url+gateway.PathSearch, changed)
	res := callTool(t, cs, "tool_search", map[string]any{"queries": []string{"add two numbers", "echo a text back"}, "limit": 1})
	got := text(res)
	if !strings.Contains(got, `For "add two numbers": `) || !strings.Contains(got, `For "echo a text back": `) ||
		!strings.Contains(got, "mcp__demo__add") || !strings.Contains(got, "mcp__demo__echo") {
		t.Fatalf("tool_search with queries: %q", got)
	}
	waitTools(t, cs, changed, "mcp__demo__echo")
	if names := toolNames(t, cs); !slices.Contains(names, "mcp__demo__add") {
		t.Fatalf("after the search: %v", names)
	}
}
