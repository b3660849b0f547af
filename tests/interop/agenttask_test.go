//go:build unix

package interop

import (
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/elicitation"
	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/plugins/agent"
	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/model/openaicompat"
)

// scriptedModel answers as a model using a tool would: its first answer calls tool with
// args, the next ones (once it has a result) say what the last tool result began with.
func scriptedModel(tool, args string) func(*modeltest.Call) modeltest.Reply {
	return func(c *modeltest.Call) modeltest.Reply {
		var last string
		for _, m := range c.Messages {
			if m.Role == "tool" {
				last = m.Content
			}
		}
		if last == "" {
			return modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "call_research", Name: tool, Arguments: args}}}
		}
		first, _, _ := strings.Cut(last, "\n")
		return modeltest.Reply{Content: "The tool said: " + first}
	}
}

// agentOn mounts the agent on root (an env's, with its MCP client) with a model that
// answers as reply does; sessions are stored in a temporary directory.
func agentOn(t *testing.T, root *ctx.Context, reply func(*modeltest.Call) modeltest.Reply) *agent.Service {
	t.Helper()
	srv := modeltest.New(t, modeltest.Options{Reply: reply})
	chat, err := openaicompat.NewChat(openaicompat.ChatConfig{Name: "flash", BaseURL: srv.URL, APIKey: srv.Key, Provider: openaicompat.ProviderDeepSeek})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := model.Key.Provide(root, model.NewService(map[string]model.Model{"flash": chat}, "")); err != nil {
		t.Fatal(err)
	}
	ctxtest.MountActive(t, root, agent.Plugin, map[string]any{"sessionsDir": t.TempDir(), "permissions": map[string]any{"default": "allow"}})
	ctxtest.Settle(t, root)
	svc, ok := agent.Key.Get(root)
	if !ok {
		t.Fatal("no agent service")
	}
	return svc
}

// TestAgentTurnWithTask: an agent turn whose model calls server-everything's
// simulate-research-query (a tool that requires a task) waits for the task like a long
// call: the task's clarifying question reaches the responder with the session's and the
// call's origin, the task's statuses are the call's progress events in the session's log,
// and the report returns to the model as the tool's result.
func TestAgentTurnWithTask(t *testing.T) {
	srv := locate(t)
	root := ctxtest.New(t)
	r := &answering{modes: []elicitation.Mode{elicitation.ModeForm}, answer: func(req *elicitation.Request) *elicitation.Response {
		if hasField(req, "interpretation") {
			return &elicitation.Response{Action: elicitation.Accept, Content: map[string]any{"interpretation": "snake"}}
		}
		return &elicitation.Response{Action: elicitation.Decline}
	}}
	if _, err := elicitation.Provide(root, "test", r); err != nil {
		t.Fatal(err)
	}
	mountOn(t, root, stdioConfig(srv))
	svc := agentOn(t, root, scriptedModel(public(researchTool), `{"topic": "python", "ambiguous": true}`))
	sess, err := svc.Start(agent.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sess.Close() }()
	end, err := sess.Send(ctxtest.Wait(t), "Research python for me.")
	if err != nil {
		t.Fatal(err)
	}
	if end.Reason != session.StopDone || end.Text != "The tool said: # Research Report: python (snake)" {
		t.Fatalf("the turn ended %s with %q", end.Reason, end.Text)
	}
	var asked *elicitation.Request
	for _, q := range r.requests() {
		if hasField(q, "interpretation") {
			asked = q
		}
	}
	if asked == nil {
		t.Fatal("the clarifying question never reached the responder")
	}
	if o, ok := elicitation.OriginOf(asked.Call); !ok || o.Session != sess.ID() || o.Call != "call_research" {
		t.Errorf("the question's origin %+v (%v), want session %s, call call_research", o, ok, sess.ID())
	}
	// The log (what a resumed session, the page and the terminal read) has the task's
	// statuses as the call's progress, each once, before its result.
	var progress []string
	for _, ev := range readLog(t, svc, sess.ID()) {
		switch ev.Type {
		case session.EventToolProgress:
			if ev.Call == nil || ev.Call.ID != "call_research" || ev.Progress == nil {
				t.Fatalf("a progress event %+v", ev)
			}
			progress = append(progress, ev.Progress.Message)
		case session.EventToolResult:
			if len(progress) == 0 {
				t.Fatal("the call's result came before any progress")
			}
		}
	}
	if !containsPrefix(progress, "task working: Gathering sources") || !containsPrefix(progress, "task input_required: ") {
		t.Errorf("the call's progress in the log: %q", progress)
	}
	for i := 1; i < len(progress); i++ {
		if progress[i] == progress[i-1] {
			t.Errorf("progress %q logged twice in a row", progress[i])
		}
	}
}

// readLog reads session id's log from the agent's store.
func readLog(t *testing.T, svc *agent.Service, id string) []session.Event {
	t.Helper()
	events, err := svc.Store().Read(id)
	if err != nil {
		t.Fatal(err)
	}
	return events
}
