package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/model/openaicompat"
	"github.com/cordisgo/harness/plugins/remote"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// remoteCall calls the exposed method name with params as the remote API would.
func remoteCall(t *testing.T, root *ctx.Context, name string, params any) (json.RawMessage, error) {
	t.Helper()
	m, ok := root.RemoteMethod(name)
	if !ok || m.Call == nil {
		t.Fatalf("no remote call %q", name)
	}
	raw, _ := json.Marshal(params)
	res, err := m.Call(t.Context(), raw)
	if err != nil {
		return nil, err
	}
	out, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return out, nil
}

// remoteSession returns a root whose model "flash" is srv's and whose registry has tool,
// with the agent mounted to ask before every call of tool, and the session it started as
// the remote API does (agent/start).
func remoteSession(t *testing.T, srv *modeltest.Server, tool toolregistry.Tool) (*ctx.Context, session.Info) {
	t.Helper()
	chat, err := openaicompat.NewChat(openaicompat.ChatConfig{Name: "flash", BaseURL: srv.URL, APIKey: srv.Key, Provider: openaicompat.ProviderDeepSeek})
	if err != nil {
		t.Fatal(err)
	}
	root := newRoot(t, map[string]model.Model{"flash": chat})
	reg, _ := toolregistry.Key.Get(root)
	if _, err := reg.Register(root, tool); err != nil {
		t.Fatal(err)
	}
	ctxtest.MountActive(t, root, Plugin, map[string]any{"sessionsDir": t.TempDir(), "permissions": map[string]any{"ask": []string{tool.Name}}})
	raw, err := remoteCall(t, root, "agent/start", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	var info session.Info
	if err := json.Unmarshal(raw, &info); err != nil || info.ID == "" {
		t.Fatalf("agent/start: %s %v", raw, err)
	}
	return root, info
}

// The agent/* methods drive an interactive session as the management page does: start,
// follow the events, send, answer the approval the policy asks, see the turn end; the
// session is listed, closed and opened again from its log.
func TestRemoteSession(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{Replies: []modeltest.Reply{
		{Reasoning: "The user wants a note.", ToolCalls: []modeltest.ToolCall{{ID: "call_1", Name: "note", Arguments: `{"text":"milk"}`}}},
		{Reasoning: "Done.", Content: "Noted: milk."},
	}})
	var notes []string
	var mu sync.Mutex
	root, info := remoteSession(t, srv, toolregistry.Tool{
		Name: "note", Description: "Writes a note down.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		Execute: func(_ context.Context, call *toolregistry.Call) (*toolregistry.Result, error) {
			var in struct{ Text string }
			_ = json.Unmarshal(call.Args, &in)
			mu.Lock()
			notes = append(notes, in.Text)
			mu.Unlock()
			return toolregistry.TextResult("written"), nil
		},
	})

	// Follow the session's events as the page does.
	events := make(chan session.Event, 64)
	ev, _ := root.RemoteMethod("agent/events")
	scx, stop := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		params, _ := json.Marshal(map[string]any{"session": info.ID})
		done <- ev.Stream(scx, params, func(v any) error { events <- v.(session.Event); return nil })
	}()
	next := func(want session.EventType) session.Event {
		t.Helper()
		for {
			select {
			case e := <-events:
				if e.Type == want {
					return e
				}
			case <-time.After(ctxtest.Timeout):
				t.Fatalf("no %s event", want)
			}
		}
	}
	if _, err := remoteCall(t, root, "agent/retry", map[string]any{"session": info.ID}); err == nil || remoteCodeOf(err) != "conflict" {
		t.Fatalf("retry before a turn: %v", err)
	}
	if _, err := remoteCall(t, root, "agent/send", map[string]any{"session": info.ID, "text": "Note that we need milk."}); err != nil {
		t.Fatal(err)
	}
	asked := next(session.EventApprovalAsked)
	if asked.Approval == nil || asked.Approval.Tool != "note" {
		t.Fatalf("approval asked: %+v", asked.Approval)
	}
	// A second send while the turn runs is a conflict; a bad decision is refused.
	if _, err := remoteCall(t, root, "agent/send", map[string]any{"session": info.ID, "text": "again"}); err == nil || remoteCodeOf(err) != "conflict" {
		t.Fatalf("send during a turn: %v", err)
	}
	if _, err := remoteCall(t, root, "agent/approve", map[string]any{"session": info.ID, "id": asked.Approval.ID, "decision": "maybe"}); err == nil || remoteCodeOf(err) != "bad_request" {
		t.Fatalf("approve maybe: %v", err)
	}
	if _, err := remoteCall(t, root, "agent/approve", map[string]any{"session": info.ID, "id": asked.Approval.ID, "decision": permission.Allow}); err != nil {
		t.Fatal(err)
	}
	end := next(session.EventTurnEnd)
	if end.End == nil || end.End.Text != "Noted: milk." {
		t.Fatalf("turn end: %+v", end.End)
	}
	mu.Lock()
	if len(notes) != 1 || notes[0] != "milk" {
		t.Fatalf("notes %v", notes)
	}
	mu.Unlock()
	// agent/retry runs the message again.
	srv.Push(modeltest.Reply{Reasoning: "Again.", Content: "Noted again."})
	if _, err := remoteCall(t, root, "agent/retry", map[string]any{"session": info.ID}); err != nil {
		t.Fatal(err)
	}
	if user := next(session.EventUser); user.Text != "Note that we need milk." {
		t.Fatalf("retried message %q", user.Text)
	}
	if end := next(session.EventTurnEnd); end.End == nil || end.End.Text != "Noted again." {
		t.Fatalf("retried turn's end: %+v", end.End)
	}

	raw, err := remoteCall(t, root, "agent/sessions", nil)
	if err != nil || !strings.Contains(string(raw), info.ID) {
		t.Fatalf("agent/sessions: %s %v", raw, err)
	}
	if _, err := remoteCall(t, root, "agent/close", map[string]any{"session": info.ID}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the event stream of a closed session: %v", err)
	}
	stop()
	if _, err := remoteCall(t, root, "agent/send", map[string]any{"session": info.ID, "text": "x"}); err == nil || remoteCodeOf(err) != "not_found" {
		t.Fatalf("send to a closed session: %v", err)
	}
	// agent/open resumes it from its log, with its history.
	raw, err = remoteCall(t, root, "agent/open", map[string]any{"session": info.ID})
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := Key.Get(root)
	ss, ok := svc.Lookup(info.ID)
	if !ok || len(ss.History()) != 6 { // two turns: the retry added a user message and an answer
		t.Fatalf("resumed %s: open %v", raw, ok)
	}
}

func remoteCodeOf(err error) remote.Code {
	return remote.CodeOf(err)
}

// TestRemoteApprovalPreview: what a call would do (the tool's Preview) travels with its
// approval over the remote API: in the approval.asked event of agent/events, also for a
// client that follows the session only once the question waits (the page reopening it,
// from sequence 0), as JSON, and in the session's pending approvals (Session.Pending).
func TestRemoteApprovalPreview(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{Replies: []modeltest.Reply{
		{ToolCalls: []modeltest.ToolCall{{ID: "call_1", Name: "edit", Arguments: `{"path":"a.go"}`}}},
		{Content: "Edited."},
	}})
	diff := "--- a.go\n+++ a.go\n@@ -1 +1 @@\n-package a\n+package b\n"
	root, info := remoteSession(t, srv, toolregistry.Tool{
		Name: "edit", Description: "Edits a file.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
		Execute: func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
			return toolregistry.TextResult("edited"), nil
		},
		Preview: func(_ context.Context, args json.RawMessage) (*permission.Preview, error) {
			if !strings.Contains(string(args), "a.go") {
				return nil, errors.New("not the call's arguments")
			}
			return &permission.Preview{Kind: permission.PreviewDiff, Text: diff}, nil
		},
	})
	ev, _ := root.RemoteMethod("agent/events")
	// follow streams the session's events from sequence 0 as JSON, as the remote API sends
	// them, until the first approval.asked, which it returns.
	follow := func() map[string]any {
		t.Helper()
		cx, stop := context.WithCancel(t.Context())
		defer stop()
		asked := make(chan map[string]any, 1)
		go func() {
			params, _ := json.Marshal(map[string]any{"session": info.ID, "after": 0})
			_ = ev.Stream(cx, params, func(v any) error {
				b, err := json.Marshal(v)
				if err != nil {
					return err
				}
				var m map[string]any
				if err := json.Unmarshal(b, &m); err != nil {
					return err
				}
				if m["type"] == string(session.EventApprovalAsked) {
					select {
					case asked <- m:
					default:
					}
				}
				return nil
			})
		}()
		select {
		case m := <-asked:
			return m
		case <-time.After(ctxtest.Timeout):
			t.Fatal("no approval.asked event")
			return nil
		}
	}
	if _, err := remoteCall(t, root, "agent/send", map[string]any{"session": info.ID, "text": "Rename the package."}); err != nil {
		t.Fatal(err)
	}
	first := follow()  // a client following from the start
	reopen := follow() // one that comes once the question waits
	for i, m := range []map[string]any{first, reopen} {
		a, _ := m["approval"].(map[string]any)
		p, _ := a["preview"].(map[string]any)
		if a["tool"] != "edit" || p["kind"] != permission.PreviewDiff || p["text"] != diff {
			t.Errorf("follower %d: approval.asked %v", i, m)
		}
	}
	svc, _ := Key.Get(root)
	ss, ok := svc.Lookup(info.ID)
	if !ok {
		t.Fatal("no session")
	}
	pending := ss.Pending()
	if len(pending) != 1 || pending[0].Preview == nil || pending[0].Preview.Text != diff {
		t.Fatalf("pending approvals %+v", pending)
	}
	a, _ := first["approval"].(map[string]any)
	if _, err := remoteCall(t, root, "agent/approve", map[string]any{"session": info.ID, "id": a["id"], "decision": permission.Allow}); err != nil {
		t.Fatal(err)
	}
}
