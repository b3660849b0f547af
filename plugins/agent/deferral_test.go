package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/plugins/toolregistry/deferral"
	"github.com/cordisgo/harness/toolsearch"
)

// With more tools visible than deferTools.maxTools and calls "definitions", a request
// carries the always-loaded tools and tool_search; a search in the session loads its hits, which the next request
// appends with their exact schemas (the earlier definitions byte-identical), and a found
// tool runs through the registry as any other. Below the threshold every tool is sent and
// tool_search is not.
func TestDeferredTools(t *testing.T) {
	root := newRoot(t, nil)
	ctxtest.MountActive(t, root, Plugin, map[string]any{"sessionsDir": "-",
		"deferTools": map[string]any{"maxTools": 20, "alwaysLoad": []string{"files/read_*"}, "calls": "definitions"}})
	reg, _ := toolregistry.Key.Get(root)
	set, err := reg.NewSet(root, "fleet")
	if err != nil {
		t.Fatal(err)
	}
	var tools []toolregistry.Tool
	for _, server := range []string{"files", "issues", "chat"} {
		for i := range 10 {
			raw := fmt.Sprintf("%s_thing_%d", []string{"read", "write", "list", "delete", "move"}[i%5], i)
			tools = append(tools, toolregistry.Tool{
				Name:        "mcp__" + server + "__" + raw,
				Description: fmt.Sprintf("%s a %s thing number %d", strings.Split(raw, "_")[0], server, i),
				Parameters:  json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}`),
				Meta:        map[string]string{"server": server, "mcpTool": raw},
				Execute: func(_ context.Context, call *toolregistry.Call) (*toolregistry.Result, error) {
					return toolregistry.TextResult("done " + call.Tool), nil
				},
			})
		}
	}
	if err := set.Replace(tools); err != nil {
		t.Fatal(err)
	}
	svc, d := mainAgent(t, root)
	s := bareSession(svc, false)
	defNames := func(defs []model.ToolDef) []string {
		var out []string
		for _, d := range defs {
			out = append(out, d.Name)
		}
		return out
	}
	first, err := s.request(d, model.Info{ContextWindow: 1_000_000})
	if err != nil {
		t.Fatal(err)
	}
	got := defNames(first.Tools)
	if !slices.Contains(got, deferral.SearchToolName) || !slices.Contains(got, "mcp__files__read_thing_0") ||
		slices.Contains(got, "mcp__chat__delete_thing_3") {
		t.Fatalf("first request's tools: %v", got)
	}

	// the model searches, in this session's context as the loop runs its calls
	args := json.RawMessage(`{"query": "remove a chat thing", "limit": 2}`)
	res, err := reg.Execute(context.WithValue(context.Background(), sessKey{}, s), d.c, deferral.SearchToolName, args, toolregistry.ExecOptions{Session: s})
	if err != nil || !strings.Contains(res.Text(), "mcp__chat__delete_thing_") {
		t.Fatalf("tool_search: %v %q", err, res.Text())
	}
	second, err := s.request(d, model.Info{ContextWindow: 1_000_000})
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Tools) != len(first.Tools)+2 {
		t.Fatalf("second request's tools: %v", defNames(second.Tools))
	}
	a, _ := json.Marshal(first.Tools)
	b, _ := json.Marshal(second.Tools[:len(first.Tools)])
	if string(a) != string(b) {
		t.Fatal("the first request's definitions changed in the second")
	}
	found := second.Tools[len(first.Tools)]
	if !strings.HasPrefix(found.Name, "mcp__chat__delete_thing_") || !strings.Contains(string(found.Parameters), `"required":["id"]`) {
		t.Fatalf("found tool %+v", found)
	}
	if r, err := reg.Execute(context.Background(), d.c, found.Name, json.RawMessage(`{"id": 3}`), toolregistry.ExecOptions{}); err != nil || r.Text() != "done "+found.Name {
		t.Fatalf("calling the found tool: %v %v", r, err)
	}

	// the servers' instructions are ranked too, from the host's toolsearch.InstructionsKey:
	// "kanban" is only in the instructions of issues
	if _, err := toolsearch.InstructionsKey.Provide(root, toolsearch.InstructionsFunc(func(_ *ctx.Context, server string) string {
		if server == "issues" {
			return "Our team's kanban board lives here."
		}
		return ""
	})); err != nil {
		t.Fatal(err)
	}
	s2 := bareSession(svc, false)
	res, err = reg.Execute(context.WithValue(context.Background(), sessKey{}, s2), d.c, deferral.SearchToolName,
		json.RawMessage(`{"query": "update the kanban board", "limit": 3}`), toolregistry.ExecOptions{Session: s2})
	if err != nil || !strings.Contains(res.Text(), "mcp__issues__") || strings.Contains(res.Text(), "mcp__chat__") {
		t.Fatalf("tool_search over the instructions: %v %q", err, res.Text())
	}

	// below the threshold: everything, no tool_search
	if err := set.Replace(tools[:5]); err != nil {
		t.Fatal(err)
	}
	small, err := s.request(d, model.Info{ContextWindow: 1_000_000})
	if err != nil {
		t.Fatal(err)
	}
	if got := defNames(small.Tools); slices.Contains(got, deferral.SearchToolName) || !slices.Contains(got, "mcp__files__read_thing_0") {
		t.Fatalf("below the threshold: %v", got)
	}
}
