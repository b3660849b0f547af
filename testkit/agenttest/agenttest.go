// Package agenttest is a test helper: a tree with the main agent on a local
// OpenAI-compatible model server (internal/modeltest) that answers with scripted replies,
// a tool registry and a tool "note" whose calls the agent asks about. Only _test.go files
// may import it.
package agenttest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/plugins/agent"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/model/openaicompat"
	"github.com/cordisgo/harness/plugins/sysprompt"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// New returns the root of a tree with the agent answering with replies, in order; the
// model is called "flash". The tree and the server end with the test.
func New(t *testing.T, replies ...modeltest.Reply) *ctx.Context {
	t.Helper()
	srv := modeltest.New(t, modeltest.Options{Replies: replies})
	chat, err := openaicompat.NewChat(openaicompat.ChatConfig{Name: "flash", BaseURL: srv.URL, APIKey: srv.Key, Provider: openaicompat.ProviderDeepSeek})
	if err != nil {
		t.Fatal(err)
	}
	root := ctxtest.New(t)
	ctxtest.MountActive(t, root, toolregistry.Plugin, nil)
	ctxtest.MountActive(t, root, sysprompt.Plugin, nil)
	if _, err := model.Key.Provide(root, model.NewService(map[string]model.Model{"flash": chat}, "")); err != nil {
		t.Fatal(err)
	}
	reg, _ := toolregistry.Key.Get(root)
	if _, err := reg.Register(root, toolregistry.Tool{
		Name: "note", Description: "Writes a note down.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
		Execute: func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
			return toolregistry.TextResult("written"), nil
		},
	}); err != nil {
		t.Fatal(err)
	}
	ctxtest.MountActive(t, root, agent.Plugin, map[string]any{"sessionsDir": t.TempDir(), "permissions": map[string]any{"ask": []string{"note"}}})
	return root
}
