package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/agent"
	"github.com/cordisgo/harness/plugins/agent/agentapi"
	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// appTools registers three tools of a server "apps" with a view (MCP Apps): show (the
// model's and the view's), poll (its view's only) and secret (the model's only); each
// counts its executions and answers with its server's raw result.
func appTools(runs map[string]*atomic.Int64) func(*ctx.Context) error {
	return func(root *ctx.Context) error {
		reg, _ := toolregistry.Key.Get(root)
		for name, vis := range map[string]string{"show": "", "poll": "app", "secret": "model"} {
			meta := map[string]string{"server": "apps", "mcpTool": name, permission.MetaUIResource: "ui://apps/view"}
			if vis != "" {
				meta[permission.MetaUIVisibility] = vis
			}
			n := &atomic.Int64{}
			runs[name] = n
			raw := json.RawMessage(`{"content":[{"type":"text","text":"` + name + `"}],"structuredContent":{"tool":"` + name + `"}}`)
			if _, err := reg.Register(root, toolregistry.Tool{Name: "mcp__apps__" + name, Description: name, Meta: meta,
				Execute: func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
					n.Add(1)
					res := toolregistry.TextResult(name)
					res.Raw = raw
					return res, nil
				}}); err != nil {
				return err
			}
		}
		return nil
	}
}

// TestViews: a tool only its view may call is not offered to the model, and the model's
// call of it is refused without running it; a call of a tool with a view keeps the
// server's result for the view (ResultInfo.View); a view's own call runs under the
// session's permissions, put to the person as a question marked as the view's (allowed:
// it runs and answers the server's result; denied: it does not run), and a view may call
// neither a tool whose visibility leaves views out nor a tool of another server.
func TestViews(t *testing.T) {
	runs := map[string]*atomic.Int64{}
	e := newEnv(t, envOptions{
		model: modeltest.Options{Replies: []modeltest.Reply{
			{ToolCalls: []modeltest.ToolCall{{ID: "v1", Name: "mcp__apps__show", Arguments: `{}`}, {ID: "v2", Name: "mcp__apps__poll", Arguments: `{}`}}},
			{Content: "shown"},
		}},
		agent:  map[string]any{"permissions": map[string]any{"allow": []any{"apps/show"}, "ask": []any{"apps/poll"}}},
		before: appTools(runs),
	})
	s := e.start(agent.StartOptions{Interactive: true})
	answers := make(chan permission.Action, 2)
	asked := make(chan permission.Request, 2)
	onEvent(t, s, func(ev session.Event) {
		if ev.Type == session.EventApprovalAsked {
			asked <- *ev.Approval
			_ = s.Approve(ev.Approval.ID, permission.Answer{Decision: <-answers})
		}
	})
	if end := e.send(s, "show it"); end.Text != "shown" {
		t.Fatalf("%+v", end)
	}
	first := string(e.srv.Accepted()[0].Body)
	if !strings.Contains(first, `"mcp__apps__show"`) || strings.Contains(first, `"mcp__apps__poll"`) {
		t.Errorf("the tools offered to the model: show, not the view's poll:\n%s", first)
	}
	got := toolMessages(e.srv.Accepted()[1])
	if len(got) != 2 || !strings.Contains(got[1], "called by its interactive view only") || runs["poll"].Load() != 0 {
		t.Fatalf("the model's call of poll: %q, %d runs", got, runs["poll"].Load())
	}
	var view json.RawMessage
	for _, ev := range s.Events() {
		if ev.Type == session.EventToolResult && ev.Call.ID == "v1" {
			view = ev.Result.View
		}
	}
	if !strings.Contains(string(view), `"structuredContent":{"tool":"show"}`) {
		t.Errorf("the view's result in the log: %s", view)
	}

	cx := context.Background()
	answers <- permission.Allow
	res, err := s.CallFromView(cx, agentapi.ViewCall{Server: "apps", Tool: "poll", Args: json.RawMessage(`{}`)})
	if q := <-asked; err != nil || res.Outcome != "ok" || !strings.Contains(string(res.Raw), `"tool":"poll"`) ||
		!strings.HasPrefix(q.CallID, "view_") || q.Tool != "mcp__apps__poll" || runs["poll"].Load() != 1 {
		t.Fatalf("the view's allowed call: %+v, %v (asked %+v, %d runs)", res, err, q, runs["poll"].Load())
	}
	answers <- permission.Deny
	res, err = s.CallFromView(cx, agentapi.ViewCall{Server: "apps", Tool: "poll"})
	if <-asked; err != nil || res.Outcome != "denied" || !res.IsError || runs["poll"].Load() != 1 {
		t.Fatalf("the view's denied call: %+v, %v, %d runs", res, err, runs["poll"].Load())
	}
	if _, err := s.CallFromView(cx, agentapi.ViewCall{Server: "apps", Tool: "secret"}); !errors.Is(err, agent.ErrNotForViews) || runs["secret"].Load() != 0 {
		t.Errorf("the model's own tool, called by a view: %v", err)
	}
	if _, err := s.CallFromView(cx, agentapi.ViewCall{Server: "demo", Tool: "poll"}); !errors.Is(err, toolregistry.ErrUnknownTool) {
		t.Errorf("another server's tool: %v", err)
	}
}
