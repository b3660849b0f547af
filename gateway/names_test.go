package gateway_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// localTools registers tools the way plugins do: one of the agent's own (as
// read_tool_result is), and one named as a shortened MCP tool would be.
func localTools(t *testing.T, root *ctx.Context, names map[string]map[string]string) {
	t.Helper()
	def := ctx.Define(ctx.Meta{Name: "local", Inject: []ctx.Dependency{toolregistry.Key}}, func(c *ctx.Context, _ struct{}) error {
		for name, meta := range names {
			if _, err := toolregistry.Key.Use(c).Register(c, toolregistry.Tool{Name: name, Meta: meta,
				Execute: func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
					return toolregistry.TextResult("local " + name), nil
				}}); err != nil {
				return err
			}
		}
		return nil
	})
	ctxtest.MountActive(t, root, def, nil)
}

// The agent's own tools (read_tool_result, the subagent tools) are not offered: not listed
// on the aggregated route nor on the search route, and not callable through call_tool.
func TestAgentToolsNotOffered(t *testing.T) {
	root := newTree(t)
	mountHTTP(t, root, "demo", demoUpstream(t))
	localTools(t, root, map[string]map[string]string{
		"read_tool_result": {"harness": "agent", "readOnlyHint": "true"},
		"agent__helper":    {"harness": "agent", "agent": "helper"},
		"notes":            nil,
	})
	f := serveGateway(t, root, gateway.Options{})
	changed := make(chan string, 1)
	cs := connect(t, f.url+gateway.PathAggregated, changed)
	waitTools(t, cs, changed, "mcp__demo__echo")
	names := toolNames(t, cs)
	if !slices.Contains(names, "notes") || slices.Contains(names, "read_tool_result") || slices.Contains(names, "agent__helper") {
		t.Errorf("aggregated route lists %v: want notes, not the agent's own tools", names)
	}
	search := connect(t, f.url+gateway.PathSearch, nil)
	if names := toolNames(t, search); slices.Contains(names, "read_tool_result") || !slices.Contains(names, "notes") {
		t.Errorf("search route lists %v", names)
	}
	res, err := search.CallTool(t.Context(), &mcp.CallToolParams{Name: gateway.CallToolName,
		Arguments: map[string]any{"name": "read_tool_result", "arguments": map[string]any{"id": "x"}}})
	if err != nil || !res.IsError || !strings.Contains(text(res), "the agent's own tool") {
		t.Errorf("call_tool read_tool_result: %v %+v", err, res)
	}
}

// With ShortNames, an MCP server's tools are offered as SERVER__TOOL (other agents add their
// own mcp__NAME__ prefix), unless another tool has that name, and called by that name.
func TestShortNames(t *testing.T) {
	root := newTree(t)
	mountHTTP(t, root, "demo", demoUpstream(t))
	localTools(t, root, map[string]map[string]string{"demo__add": nil})
	f := serveGateway(t, root, gateway.Options{ShortNames: true})
	changed := make(chan string, 1)
	cs := connect(t, f.url+gateway.PathAggregated, changed)
	waitTools(t, cs, changed, "demo__echo")
	names := toolNames(t, cs)
	for _, want := range []string{"demo__echo", "demo__add", "mcp__demo__add"} {
		if !slices.Contains(names, want) {
			t.Errorf("no %s in %v", want, names)
		}
	}
	if slices.Contains(names, "mcp__demo__echo") {
		t.Errorf("mcp__demo__echo offered under its long name too: %v", names)
	}
	for name, want := range map[string]string{"demo__echo": "hi", "demo__add": "local demo__add"} {
		args := map[string]any{"text": "hi"}
		if name == "demo__add" {
			args = map[string]any{}
		}
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError || text(res) != want {
			t.Errorf("%s: %v %+v, want %q", name, err, res, want)
		}
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp__demo__add", Arguments: map[string]any{"a": 2, "b": 3}})
	if err != nil || res.IsError || !strings.Contains(text(res), "5") {
		t.Errorf("mcp__demo__add (its short name taken): %v %+v", err, res)
	}
}
