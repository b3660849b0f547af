package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/plugins/agent"
	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/plugins/toolregistry/deferral"
)

// fleetTools are 120 tools of three servers, enough to be deferred.
func fleetTools() []toolregistry.Tool {
	var tools []toolregistry.Tool
	verbs := []string{"read", "write", "list", "delete", "move", "copy", "rename", "archive"}
	for _, server := range []string{"files", "issues", "chat"} {
		for i := range 40 {
			raw := fmt.Sprintf("%s_%s_thing_%d", verbs[i%len(verbs)], server, i)
			tools = append(tools, toolregistry.Tool{
				Name:        "mcp__" + server + "__" + raw,
				Description: fmt.Sprintf("%s a %s thing number %d, with its history, its owner and its labels", verbs[i%len(verbs)], server, i),
				Parameters: json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer","description":"The thing's number."},` +
					`"reason":{"type":"string","description":"Why, in a sentence, for the audit log."},"dryRun":{"type":"boolean"}},"required":["id"]}`),
				Meta: map[string]string{"server": server, "mcpTool": raw},
				Execute: func(_ context.Context, call *toolregistry.Call) (*toolregistry.Result, error) {
					return toolregistry.TextResult("done " + call.Tool + " " + string(call.Args)), nil
				},
			})
		}
	}
	return tools
}

var foundTool = regexp.MustCompile(`1\. (mcp__\w+) \(`)

// searchSession is the model of the cache measurement: 20 turns; turns 2, 6, 10, 14 and 18
// search a tool and call what they found (through call_tool when the request offers it,
// else by name), the others call the always-loaded echo; each turn ends with an answer.
func searchSession(c *modeltest.Call) modeltest.Reply {
	last := c.Messages[len(c.Messages)-1]
	proxy := false
	for _, t := range c.Tools {
		proxy = proxy || t == deferral.CallToolName
	}
	var turn int
	for i := len(c.Messages) - 1; i >= 0; i-- {
		if c.Messages[i].Role == "user" {
			_, _ = fmt.Sscanf(c.Messages[i].Content, "task %d", &turn)
			break
		}
	}
	answer := modeltest.Reply{Reasoning: "Done.", Content: fmt.Sprintf("Task %d is done: ", turn) + strings.Repeat("the details of what was done. ", 12)}
	search := turn%4 == 2
	switch {
	case last.Role == "user" && search:
		verbs := []string{"delete", "archive", "rename", "copy", "move"}
		return modeltest.Reply{Reasoning: "I need a tool.", ToolCalls: []modeltest.ToolCall{{Name: deferral.SearchToolName,
			Arguments: fmt.Sprintf(`{"query":"%s a %s thing","limit":3}`, verbs[turn/4], []string{"chat", "files", "issues"}[turn%3])}}}
	case last.Role == "user":
		return modeltest.Reply{Reasoning: "Echo first.", ToolCalls: []modeltest.ToolCall{{Name: "mcp__demo__echo", Arguments: fmt.Sprintf(`{"text":"task %d"}`, turn)}}}
	case last.Role == "tool" && strings.Contains(last.Content, "tool(s) found"):
		m := foundTool.FindStringSubmatch(last.Content)
		if m == nil {
			return modeltest.Reply{Content: "no tool found"}
		}
		if proxy {
			return modeltest.Reply{Reasoning: "Call it.", ToolCalls: []modeltest.ToolCall{{Name: deferral.CallToolName,
				Arguments: fmt.Sprintf(`{"name":%q,"arguments":{"id":%d,"reason":"asked"}}`, m[1], turn)}}}
		}
		return modeltest.Reply{Reasoning: "Call it.", ToolCalls: []modeltest.ToolCall{{Name: m[1], Arguments: fmt.Sprintf(`{"id":%d,"reason":"asked"}`, turn)}}}
	}
	return answer
}

// TestToolSearchKeepsTheCache measures what tool searches cost in cache hits (the local
// server's prefix cache, DeepSeek's 64-token units): a 20-turn session with 5 searches,
// found tools called through call_tool (calls: proxy, the default) against the found tools'
// definitions appended to the request's tools (calls: definitions). The bar: at least 90 %
// of the prompt tokens are cache hits with the default.
func TestToolSearchKeepsTheCache(t *testing.T) {
	share := map[string]float64{}
	for _, calls := range []string{deferral.CallsProxy, deferral.CallsDefinitions} {
		e := newEnv(t, envOptions{
			model: modeltest.Options{Reply: searchSession},
			agent: map[string]any{"permissions": map[string]any{"default": "allow"},
				"deferTools": map[string]any{"calls": calls, "alwaysLoad": []any{"demo"}}},
			before: func(root *ctx.Context) error {
				reg, _ := toolregistry.Key.Get(root)
				set, err := reg.NewSet(root, "fleet")
				if err != nil {
					return err
				}
				return set.Replace(fleetTools())
			},
		})
		s := e.start(agent.StartOptions{})
		for i := 1; i <= 20; i++ {
			end := e.send(s, fmt.Sprintf("task %d", i))
			if end.Reason != session.StopDone || !strings.HasPrefix(end.Text, fmt.Sprintf("Task %d is done", i)) {
				t.Fatalf("%s: turn %d: %+v", calls, i, end)
			}
		}
		searches, found := 0, 0
		for _, ev := range s.Events() {
			if ev.Type != session.EventToolResult {
				continue
			}
			switch {
			case ev.Call.Tool == deferral.SearchToolName:
				searches++
			case strings.HasPrefix(ev.Call.Tool, "mcp__") && !strings.HasPrefix(ev.Call.Tool, "mcp__demo__") && ev.Result.Outcome == "ok":
				found++
			}
		}
		if searches != 5 || found != 5 {
			t.Fatalf("%s: %d searches, %d found tools called", calls, searches, found)
		}
		hits, prompt := 0, 0
		var after []string // the requests right after a search: their misses against the search result's size
		acc := e.srv.Accepted()
		for i, r := range acc {
			hits += r.CacheHitTokens
			prompt += r.PromptTokens
			if i > 0 && strings.Contains(string(acc[i-1].Body), `"name":"tool_search"`) && strings.Contains(string(r.Body), "tool(s) found") &&
				strings.Count(string(r.Body), "tool(s) found") > strings.Count(string(acc[i-1].Body), "tool(s) found") {
				after = append(after, fmt.Sprintf("%d missed", r.PromptTokens-r.CacheHitTokens))
			}
		}
		share[calls] = float64(hits) / float64(prompt)
		t.Logf("calls %s: %d requests, %d prompt tokens, %d cache hits: %.1f %%; the requests after the searches: %s tokens",
			calls, len(acc), prompt, hits, 100*share[calls], strings.Join(after, ", "))
	}
	if share[deferral.CallsProxy] < 0.9 {
		t.Errorf("calls proxy: %.1f %% of the prompt tokens were cache hits, want at least 90 %%", 100*share[deferral.CallsProxy])
	}
	if share[deferral.CallsProxy] <= share[deferral.CallsDefinitions] {
		t.Errorf("proxy %.3f is no better than definitions %.3f", share[deferral.CallsProxy], share[deferral.CallsDefinitions])
	}
}
