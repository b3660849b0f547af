package examples_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/plugins/agent"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/model/openaicompat"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// registerNoteTools registers two tools of a notes plugin: one that only reads, annotated
// so, and one that writes, which says nothing.
func registerNoteTools(c *ctx.Context) error {
	tools := toolregistry.Key.Use(c)
	_, err := tools.Register(c, toolregistry.Tool{
		Name:        "count_notes",
		Description: "Counts the notes.",
		// MCP's tool annotations, as a server's tools carry them: a read-only tool that
		// destroys nothing runs without an approval and alongside other such calls.
		Meta: map[string]string{"readOnlyHint": "true", "destructiveHint": "false", "idempotentHint": "true"},
		Execute: func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
			return toolregistry.TextResult("3 notes"), nil
		},
	})
	if err != nil {
		return err
	}
	_, err = tools.Register(c, toolregistry.Tool{
		Name:        "add_note",
		Description: "Adds a note.",
		Execute: func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
			return toolregistry.TextResult("added"), nil
		},
	})
	return err
}

// A tool's annotations decide what the agent may do without asking: in a session nobody
// answers approvals for (harness ask), the model's call of the read-only tool runs and its
// call of the other is refused, with the reason the model reads.
func TestToolAnnotations(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{Replies: []modeltest.Reply{
		{ToolCalls: []modeltest.ToolCall{{ID: "r", Name: "count_notes", Arguments: `{}`}, {ID: "w", Name: "add_note", Arguments: `{}`}}},
		{Content: "There are 3 notes; I could not add one."},
	}})
	chat, err := openaicompat.NewChat(openaicompat.ChatConfig{Name: "m", Provider: openaicompat.ProviderDeepSeek, BaseURL: srv.URL, APIKey: srv.Key, RetryBase: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	root := newRoot()
	t.Cleanup(func() { _ = root.Scope().Dispose(context.Background()) })
	if _, err := model.Key.Provide(root, model.NewService(map[string]model.Model{"m": chat}, "")); err != nil {
		t.Fatal(err)
	}
	notes := ctx.Define(ctx.Meta{Name: "notes", Inject: []ctx.Dependency{toolregistry.Key}}, func(c *ctx.Context, _ struct{}) error {
		return registerNoteTools(c)
	})
	for _, p := range []struct {
		def ctx.PluginDef
		cfg any
	}{{toolregistry.Plugin, nil}, {notes, nil}, {agent.Plugin, map[string]any{"sessionsDir": t.TempDir()}}} {
		if _, err := root.Plugin(p.def, p.cfg); err != nil {
			t.Fatal(err)
		}
	}
	ctxtest.Settle(t, root)
	svc, ok := agent.Key.Get(root)
	if !ok {
		t.Fatal("no agent service")
	}
	s, err := svc.Start(agent.StartOptions{Ephemeral: true}) // not Interactive: nobody answers approvals
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	if _, err := s.Send(ctxtest.Wait(t), "count the notes, then add one"); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	body := string(reqs[1].Body)
	if !strings.Contains(body, `"tool_call_id":"r"`) || !strings.Contains(body, "3 notes") {
		t.Errorf("the read-only call did not run:\n%s", body)
	}
	if strings.Contains(body, "added") || !strings.Contains(body, "nobody can be asked for approval") {
		t.Errorf("the unannotated call was not refused for want of an approval:\n%s", body)
	}
}
