package agent_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/agent"
	"github.com/cordisgo/harness/plugins/agent/session"
)

// TestResumeIsExact: the model's own tool-call arguments are logged as it wrote them (a
// secret-looking key included) and replayed byte for byte, while the call's display
// (tool.start, tool.result, the approval) masks them; an approval is recorded with its
// real reason; the log and the saved results are 0600 in 0700 directories; a session
// resumed under another profile says so.
func TestResumeIsExact(t *testing.T) {
	var provided ctx.Disposer
	args := `{"text": "x", "token":"tok-0123456789abcdef"}`
	e := newEnv(t, envOptions{
		model: modeltest.Options{Replies: []modeltest.Reply{
			{Reasoning: "Echo with the token.", ToolCalls: []modeltest.ToolCall{{ID: "c1", Name: "mcp__demo__echo", Arguments: args}}},
			{Content: "done"},
			{Content: "again"},
		}},
		agent: map[string]any{"permissions": map[string]any{"ask": []any{"mcp__demo__echo"}}, "largeResultBytes": 10},
		before: func(root *ctx.Context) (err error) {
			provided, err = agent.ProfileKey.Provide(root, "work")
			return err
		},
	})
	s := e.start(agent.StartOptions{Interactive: true})
	onEvent(t, s, func(ev session.Event) {
		if ev.Type == session.EventApprovalAsked {
			_ = s.Approve(ev.Approval.ID, permission.Answer{Decision: permission.Allow})
		}
	})
	e.send(s, "echo it")
	live := s.History()
	if live[1].ToolCalls[0].Arguments != args {
		t.Fatalf("history args %q", live[1].ToolCalls[0].Arguments)
	}
	for _, ev := range s.Events() {
		switch {
		case ev.Call != nil && strings.Contains(ev.Call.Args, "tok-0123456789abcdef"):
			t.Errorf("%s shows the token: %s", ev.Type, ev.Call.Args)
		case ev.Type == session.EventApprovalDecided && (ev.Approval.Why != "the user allowed it" || strings.Contains(string(ev.Approval.Args), "tok-0123")):
			t.Errorf("approval recorded as %+v", ev.Approval)
		case ev.Type == session.EventSession && ev.Header.Profile != "work":
			t.Errorf("header %+v", ev.Header)
		}
	}
	dir := s.Dir()
	for p, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, "events.jsonl"): 0o600,
		filepath.Join(dir, "results"): 0o700, filepath.Join(dir, "results", "c1.txt"): 0o600} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want %v", p, st.Mode().Perm(), err, want)
		}
	}
	id := s.ID()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The same store under another profile.
	if err := provided(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := agent.ProfileKey.Provide(e.root, "home"); err != nil {
		t.Fatal(err)
	}
	r := e.resume(id)
	if !sameJSON(r.History(), live) {
		t.Fatalf("resumed history differs:\n%+v\n%+v", r.History(), live)
	}
	if info := r.Info(); info.Profile != "work" || info.ResumedUnder != "home" {
		t.Fatalf("info %+v", info)
	}
	e.send(r, "more")
	reqs := e.srv.Accepted()
	if n := modeltest.CommonPrefix(reqs[1].Prompt, reqs[2].Prompt); n < len(reqs[1].Prompt)-64 {
		t.Errorf("after resume the request shares %d of %d bytes", n, len(reqs[1].Prompt))
	}
}

// TestResumeReloadsFoundTools: with deferTools.calls "definitions", the tools a search
// found are in the requests' tools; a resumed session loads them again from the search's
// result in its log, so its first request carries the same definitions as the last one
// sent (the prefix holds) and the model calls the found tool by name, not "unknown tool".
func TestResumeReloadsFoundTools(t *testing.T) {
	var tools [][]string // each request's tool names
	var mu sync.Mutex
	step := 0
	e := newEnv(t, envOptions{
		model: modeltest.Options{Reply: func(c *modeltest.Call) modeltest.Reply {
			mu.Lock()
			defer mu.Unlock()
			tools = append(tools, slices.Clone(c.Tools))
			step++
			switch step {
			case 1:
				return modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "s1", Name: "tool_search", Arguments: `{"query": "echo text back unchanged", "limit": 1}`}}}
			case 2, 4:
				return modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: fmt.Sprintf("e%d", step), Name: "mcp__demo__echo", Arguments: `{"text": "hi"}`}}}
			default:
				return modeltest.Reply{Content: "echoed"}
			}
		}},
		agent: map[string]any{"deferTools": map[string]any{"maxTools": 2, "calls": "definitions"}},
	})
	s := e.start(agent.StartOptions{})
	e.send(s, "echo hi")
	mu.Lock()
	if len(tools) != 3 || slices.Contains(tools[0], "mcp__demo__echo") || !slices.Contains(tools[1], "mcp__demo__echo") {
		mu.Unlock()
		t.Fatalf("requests' tools before the resume: %q", tools)
	}
	lastBefore := tools[2]
	mu.Unlock()
	resumed := e.reopen(s)
	end := e.send(resumed, "again")
	mu.Lock()
	defer mu.Unlock()
	if len(tools) != 5 || !slices.Equal(tools[3], lastBefore) {
		t.Fatalf("the resumed session's first request's tools %q, want the last ones sent %q", tools[3:], lastBefore)
	}
	for _, m := range resumed.History() {
		if m.Role == "tool" && strings.Contains(m.Content, "unknown tool") {
			t.Errorf("after the resume: %q", m.Content)
		}
	}
	if end.Reason != session.StopDone || end.Text != "echoed" {
		t.Errorf("turn end %+v", end)
	}
}
