package agent_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/agent"
	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/sampling"
	"github.com/cordisgo/harness/testkit/mcptest"
)

// TestPermissions: deny rules beat allow rules; with nobody to ask the model reads why the
// call was refused; an interactive session asks, and "allow for this session" is
// remembered.
func TestPermissions(t *testing.T) {
	e := newEnv(t, envOptions{
		model: modeltest.Options{Replies: []modeltest.Reply{
			// Non-interactive session: add is denied by rule, add_tool needs asking.
			{ToolCalls: []modeltest.ToolCall{{ID: "d1", Name: "mcp__demo__add", Arguments: `{"a":1,"b":2}`},
				{ID: "d2", Name: "mcp__demo__add_tool", Arguments: `{"name":"p"}`}}},
			{Content: "refused"},
			// Interactive session: add_tool asked twice, allowed for the session once.
			{ToolCalls: []modeltest.ToolCall{{ID: "i1", Name: "mcp__demo__add_tool", Arguments: `{"name":"q"}`}}},
			{ToolCalls: []modeltest.ToolCall{{ID: "i2", Name: "mcp__demo__add_tool", Arguments: `{"name":"r"}`}}},
			{Content: "done"},
		}},
		agent: map[string]any{"permissions": map[string]any{"allow": []any{"mcp__demo__*"}, "deny": []any{"demo/add"},
			"ask": []any{"mcp__demo__add_tool"}}},
	})
	s := e.start(agent.StartOptions{})
	e.send(s, "try")
	got := toolMessages(e.srv.Accepted()[1])
	if len(got) != 2 || !strings.Contains(got[0], `the agent's permissions deny it (rule "demo/add")`) ||
		!strings.Contains(got[1], "nobody can be asked") {
		t.Fatalf("refusals %q", got)
	}

	s2 := e.start(agent.StartOptions{Interactive: true})
	onEvent(t, s2, func(ev session.Event) {
		if ev.Type == session.EventApprovalAsked {
			_ = s2.Approve(ev.Approval.ID, permission.Answer{Decision: permission.AllowSession})
		}
	})
	if end := e.send(s2, "add tools"); end.Text != "done" {
		t.Fatalf("%+v", end)
	}
	var decided []string
	for _, ev := range s2.Events() {
		if ev.Type == session.EventApprovalDecided {
			decided = append(decided, ev.Approval.Tool+":"+string(ev.Approval.Decision))
		}
	}
	if !slices.Equal(decided, []string{"mcp__demo__add_tool:allow_session"}) {
		t.Errorf("approvals %v (the second call must not ask)", decided)
	}
	reqs := e.srv.Accepted()
	if got := toolMessages(reqs[len(reqs)-1]); len(got) != 2 || !strings.Contains(got[1], "extra_r") {
		t.Errorf("after approval %q", got)
	}
}

// TestSubagent: an agent scope with the agent plugin is a subagent: the parent's model
// calls agent__helper, which runs the helper's own loop with its narrowed tools and its
// prompt on the parent's MCP client (no new client), and returns its final answer.
func TestSubagent(t *testing.T) {
	var helperCalls []modeltest.Call
	e := newEnv(t, envOptions{
		model: modeltest.Options{Reply: func(c *modeltest.Call) modeltest.Reply {
			helper := !slices.Contains(c.Tools, "agent__helper")
			last := c.Messages[len(c.Messages)-1]
			switch {
			case helper && last.Role == "user":
				helperCalls = append(helperCalls, *c)
				return modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "mcp__demo__echo", Arguments: `{"text":"from helper"}`}}}
			case helper:
				helperCalls = append(helperCalls, *c)
				return modeltest.Reply{Content: "helper says: " + last.Content}
			case last.Role == "user":
				return modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "agent__helper", Arguments: `{"task":"echo something"}`}}}
			default:
				return modeltest.Reply{Content: "main got: " + last.Content}
			}
		}},
		before: func(root *ctx.Context) error {
			def := ctx.Define(ctx.Meta{Name: "helper"}, func(c *ctx.Context, _ struct{}) error {
				_, err := c.Layered().Plugin(agent.Plugin, map[string]any{"description": "Echoes things.",
					"prompt": "You are the helper.", "tools": map[string]any{"allow": []any{"mcp__demo__echo"}}})
				return err
			})
			_, err := root.Plugin(def, nil)
			return err
		},
	})
	s := e.start(agent.StartOptions{})
	sub := s.Subscribe(0)
	defer sub.Close()
	end := e.send(s, "delegate")
	if end.Text != "main got: helper says: from helper" {
		t.Fatalf("answer %q", end.Text)
	}
	if len(helperCalls) != 2 {
		t.Fatalf("%d helper requests", len(helperCalls))
	}
	if !slices.Equal(helperCalls[0].Tools, []string{"mcp__demo__echo", "read_tool_result", "task_result"}) {
		t.Errorf("helper's tools %v", helperCalls[0].Tools)
	}
	if sys := helperCalls[0].Messages[0]; sys.Role != "system" || !strings.Contains(sys.Content, "You are the helper.") {
		t.Errorf("helper's system prompt %q", sys.Content)
	}
	// One MCP client in the tree: the subagent used its parent's.
	clients := 0
	reg, _ := toolregistry.Key.Get(e.root)
	for _, r := range reg.History() {
		if r.Tool == "mcp__demo__echo" {
			clients++
		}
	}
	if clients != 1 || len(mcpClientScopes(e.root)) != 1 {
		t.Errorf("echo calls %d, clients %d", clients, len(mcpClientScopes(e.root)))
	}
	// The helper's events reached the parent's subscribers, marked with its name.
	seen := false
	for {
		ev, err := sub.Next(ctxtest.Wait(t))
		if err != nil {
			t.Fatal(err)
		}
		if ev.Agent == "helper" && ev.Type == session.EventToolResult && ev.Call.Tool == "mcp__demo__echo" {
			seen = true
		}
		if ev.Type == session.EventTurnEnd && ev.Agent == "" {
			break
		}
	}
	if !seen {
		t.Error("the helper's tool result was not forwarded")
	}
	// The helper's run is a session of its own, logged with its parent.
	list, _ := e.svc.Store().List()
	if len(list) != 2 || list[0].Parent != s.ID() && list[1].Parent != s.ID() {
		t.Fatalf("sessions %+v", list)
	}
	// What the helper used is the parent's turn's too: its cost line and token budget, the
	// session's totals (its requests stay the helper's).
	parentInfo, helperInfo := list[0], list[1]
	if helperInfo.Parent != s.ID() {
		parentInfo, helperInfo = helperInfo, parentInfo
	}
	events, err := e.svc.Store().Read(s.ID())
	if err != nil {
		t.Fatal(err)
	}
	var own, folded model.Usage
	for _, ev := range events {
		switch {
		case ev.Type != session.EventUsage:
		case ev.Agent == "":
			own.PromptTokens += ev.Usage.PromptTokens
			own.CompletionTokens += ev.Usage.CompletionTokens
		case ev.Agent == "helper" && ev.Call != nil && ev.Call.Tool == "agent__helper":
			folded = *ev.Usage
		default:
			t.Errorf("usage event %+v", ev)
		}
	}
	h := helperInfo.Usage
	if h.Requests != 2 || h.PromptTokens == 0 || folded.PromptTokens != h.PromptTokens || folded.CompletionTokens != h.CompletionTokens {
		t.Errorf("folded %+v, the helper's session %+v", folded, h)
	}
	if end.Usage.PromptTokens != own.PromptTokens+h.PromptTokens || end.Usage.CompletionTokens != own.CompletionTokens+h.CompletionTokens {
		t.Errorf("turn usage %+v, own %+v + helper's %+v", end.Usage, own, h)
	}
	p := parentInfo.Usage
	if p.Requests != 2 || p.PromptTokens != end.Usage.PromptTokens || p.CompletionTokens != end.Usage.CompletionTokens {
		t.Errorf("the session's totals %+v, want the turn's %+v over 2 requests", p, end.Usage)
	}
}

// mcpClientScopes lists the MCP client scopes of root's tree.
func mcpClientScopes(root *ctx.Context) []*ctx.Scope { return root.Registry().Scopes(mcpclient.Plugin) }

// TestSubagentDepth: maxDepth 0 gives no subagent tools.
func TestSubagentDepth(t *testing.T) {
	e := newEnv(t, envOptions{
		agent: map[string]any{"maxDepth": 0},
		before: func(root *ctx.Context) error {
			def := ctx.Define(ctx.Meta{Name: "helper"}, func(c *ctx.Context, _ struct{}) error {
				_, err := c.Layered().Plugin(agent.Plugin, nil)
				return err
			})
			_, err := root.Plugin(def, nil)
			return err
		},
	})
	reg, _ := toolregistry.Key.Get(e.root)
	if _, ok := reg.Lookup(e.root, "agent__helper"); ok {
		t.Error("a subagent tool with maxDepth 0")
	}
}

// TestResume: a session whose process died mid-step (a call without a result, a torn last
// line) resumes with a valid history: the open call gets an aborted result, and the first
// request after the resume repeats the old request's prefix byte for byte.
// A session closed before its first message leaves nothing in the store; one with a turn
// stays.
func TestUnusedSessionNotKept(t *testing.T) {
	e := newEnv(t, envOptions{model: modeltest.Options{Replies: []modeltest.Reply{{Content: "hi"}}}})
	s := e.start(agent.StartOptions{})
	dir := s.Dir()
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("a started session has no directory: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("an unused session's directory after Close: %v", err)
	}
	if list, _ := e.svc.Store().List(); len(list) != 0 {
		t.Fatalf("sessions listed: %+v", list)
	}
	used := e.start(agent.StartOptions{})
	e.send(used, "hello")
	if err := used.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(used.Dir()); err != nil {
		t.Fatalf("a session with a turn was removed: %v", err)
	}
	// "last" names it, and resumes it.
	if id, err := e.svc.Store().Resolve(session.Last); err != nil || id != used.ID() {
		t.Fatalf("Resolve(last) = %q, %v; want %q", id, err, used.ID())
	}
	r, err := e.svc.Resume(session.Last, agent.StartOptions{})
	if err != nil || r.ID() != used.ID() {
		t.Fatalf("Resume(last): %v", err)
	}
	_ = r.Close()
	if _, err := session.OpenStore(t.TempDir()).Resolve(session.Last); !errors.Is(err, session.ErrUnknownSession) {
		t.Fatalf("Resolve(last) of an empty store: %v", err)
	}
}

func TestResume(t *testing.T) {
	e := newEnv(t, envOptions{model: modeltest.Options{Replies: []modeltest.Reply{
		{Reasoning: "r1", ToolCalls: []modeltest.ToolCall{{ID: "e1", Name: "mcp__demo__echo", Arguments: `{"text":"one"}`}}},
		{Content: "first answer"},
		{Content: "second answer"},
	}}})
	s := e.start(agent.StartOptions{})
	e.send(s, "first")
	id := s.ID()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// What a crash mid-step leaves: an assistant message whose call has no result, then a
	// torn line.
	p := filepath.Join(e.svc.Store().SessionDir(id), "events.jsonl")
	events, err := e.svc.Store().Read(id)
	if err != nil {
		t.Fatal(err)
	}
	open := session.Event{Seq: events[len(events)-1].Seq + 1, Type: session.EventAssistant, Turn: 2,
		Message: &model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "lost", Name: "mcp__demo__echo", Arguments: `{"text":"x"}`}}}}
	user := session.Event{Seq: open.Seq - 1, Type: session.EventUser, Text: "crashing turn"}
	user.Seq, open.Seq = open.Seq, open.Seq+1
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []session.Event{user, open} {
		b, _ := json.Marshal(ev)
		_, _ = f.Write(append(b, '\n'))
	}
	_, _ = f.WriteString(`{"seq":99,"type":"tool.res`)
	_ = f.Close()

	r := e.resume(id)
	if end := e.send(r, "second"); end.Text != "second answer" {
		t.Fatalf("%+v", end)
	}
	reqs := e.srv.Accepted()
	last := reqs[len(reqs)-1]
	if got := toolMessages(last); len(got) != 2 || !strings.Contains(got[1], "lost=Error: aborted") {
		t.Errorf("tool messages after resume %q", got)
	}
	if n := modeltest.CommonPrefix(reqs[1].Prompt, last.Prompt); n != len(reqs[1].Prompt) {
		t.Errorf("the resumed request repeats %d of the %d bytes of the old one", n, len(reqs[1].Prompt))
	}
	data, _ := os.ReadFile(p)
	if strings.Contains(string(data), `"type":"tool.res`+"\n") || strings.Count(string(data), `"type":"session"`) != 2 {
		t.Errorf("log after resume:\n%s", data)
	}
}

// TestSampling: a server's sampling request caused by the agent's call is answered by the
// agent's model once the person approves, the question showing what the server asks
// (messages, system prompt, token limit, model preferences); without a person it is
// refused.
func TestSampling(t *testing.T) {
	h := mcptest.NewHTTP(t, mcptest.NewSampler(mcp.CreateMessageParams{MaxTokens: 100, SystemPrompt: "You summarize.", //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
		ModelPreferences: &mcp.ModelPreferences{Hints: []*mcp.ModelHint{{Name: "claude-3-sonnet"}}, IntelligencePriority: 0.8}, //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
		Messages:         []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "summarize this"}}}}))          //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
	e := newEnv(t, envOptions{
		model: modeltest.Options{Reply: func(c *modeltest.Call) modeltest.Reply {
			last := c.Messages[len(c.Messages)-1]
			switch {
			case last.Content == "summarize this":
				return modeltest.Reply{Content: "a summary"}
			case last.Role == "user":
				return modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "mcp__s__summarize", Arguments: `{}`}}}
			}
			return modeltest.Reply{Content: "result: " + last.Content}
		}},
		before: func(root *ctx.Context) error {
			// Offered before the client connects, as a host with an agent row does: the
			// session's calls carry its sampler.
			if _, err := sampling.Offer(root, "host"); err != nil {
				return err
			}
			_, err := root.Plugin(mcpclient.Plugin, map[string]any{"serverName": "s", "transport": "streamable-http", "url": h.URL()})
			return err
		},
	})
	s := e.start(agent.StartOptions{})
	if end := e.send(s, "go"); !strings.Contains(end.Text, "no sample") || !strings.Contains(end.Text, "nobody can be asked") {
		t.Errorf("non-interactive: %q", end.Text)
	}
	s2 := e.start(agent.StartOptions{Interactive: true})
	asked := make(chan *permission.Sampling, 1)
	onEvent(t, s2, func(ev session.Event) {
		if ev.Type == session.EventApprovalAsked && ev.Approval.Kind == "sampling" {
			asked <- ev.Approval.Sampling
			_ = s2.Approve(ev.Approval.ID, permission.Answer{Decision: permission.Allow})
		}
	})
	if end := e.send(s2, "go"); end.Text != "result: sampled: a summary" {
		t.Errorf("interactive: %q", end.Text)
	}
	got := <-asked
	want := &permission.Sampling{SystemPrompt: "You summarize.", Messages: []permission.SamplingMessage{{Role: "user", Text: "summarize this"}},
		MaxTokens: 100, ModelHints: []string{"claude-3-sonnet"}, IntelligencePriority: 0.8}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the question shows %+v, want %+v", got, want)
	}
}
