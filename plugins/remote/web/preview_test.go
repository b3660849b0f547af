//go:build browser

package web_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// TestApprovalPreview: an approval shows what the call would do, as its tool says before
// it runs: an edit's unified diff side by side (the removed line left, facing the line
// that replaces it right, with their line numbers), a shell call's command as it will run.
func TestApprovalPreview(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{Replies: []modeltest.Reply{
		{ToolCalls: []modeltest.ToolCall{{ID: "call_edit", Name: "edit", Arguments: `{"path":"main.go"}`}}},
		{ToolCalls: []modeltest.ToolCall{{ID: "call_sh", Name: "shell", Arguments: `{"command":"go test ./..."}`}}},
		{Content: "edited and tested"},
	}})
	s := newStack(t, nil)
	reg, _ := toolregistry.Key.Get(s.root)
	diff := "--- a/main.go\n+++ b/main.go\n@@ -3,3 +3,3 @@\n import \"fmt\"\n-func main() { fmt.Println(\"helo\") }\n+func main() { fmt.Println(\"hello\") }\n // end\n"
	for name, pv := range map[string]*permission.Preview{
		"edit":  {Kind: permission.PreviewDiff, Text: diff},
		"shell": {Kind: permission.PreviewCommand, Text: "go test ./...\n(in the workspace's root, workspace-write)"},
	} {
		if _, err := reg.Register(s.root, toolregistry.Tool{Name: name, Description: name,
			Execute: func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
				return toolregistry.TextResult(name + " done"), nil
			},
			Preview: func(context.Context, json.RawMessage) (*permission.Preview, error) { return pv, nil },
		}); err != nil {
			t.Fatal(err)
		}
	}
	withAgent(t, s, srv, map[string]any{"ask": []string{"edit", "shell"}})
	b := browser(t)
	run(t, b, chromedp.Navigate(s.srv.PageURL()), chatReady(10*time.Second),
		say("fix the typo"),
		until(`!!document.querySelector('#chat-log [data-approval] [data-preview="diff"]')`, 20*time.Second))
	// The removed line faces the line that replaces it, each with its number.
	row := eval[string](t, b, `[...document.querySelectorAll('#chat-log [data-preview="diff"] tbody tr')]
		.find(tr => tr.querySelector('[data-change="del"]'))?.innerText.replace(/\s+/g, " ").trim() || ""`)
	if want := `4 func main() { fmt.Println("helo") } 4 func main() { fmt.Println("hello") }`; row != want {
		t.Errorf("the changed line side by side: %q, want %q", row, want)
	}
	if n := eval[int](t, b, `document.querySelectorAll('#chat-log [data-preview="diff"] [data-change="add"]').length`); n != 1 {
		t.Errorf("%d added lines, want 1", n)
	}
	run(t, b, click(`#chat-log [data-approval] [data-decision="allow"]`),
		until(`!!document.querySelector('#chat-log [data-approval] [data-preview="command"]')`, 20*time.Second))
	if cmd := text(t, b, `#chat-log [data-preview="command"]`); !strings.HasPrefix(cmd, "go test ./...") {
		t.Errorf("the shell call's command: %q", cmd)
	}
	run(t, b, click(`#chat-log [data-approval] [data-decision="allow"]`),
		until(`document.querySelector('#chat-log').innerText.includes("edited and tested")`, 20*time.Second))
}
