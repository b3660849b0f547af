package termchat_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/remote"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/termchat"
	"github.com/cordisgo/harness/testkit/agenttest"
)

// TestApprovalPreview: an approval shows the call's preview before the question — a diff
// coloured, a command with where it runs dimmed — with the server's control sequences made
// visible; a preview longer than the screen goes to the pager instead.
func TestApprovalPreview(t *testing.T) {
	root := agenttest.New(t,
		modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "call_1", Name: "edit", Arguments: `{"lines":1}`}}},
		modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "call_2", Name: "edit", Arguments: `{"lines":50}`}}},
		modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "call_3", Name: "run", Arguments: `{}`}}},
		modeltest.Reply{Content: "Done."},
	)
	reg, _ := toolregistry.Key.Get(root)
	for _, tl := range []toolregistry.Tool{{
		Name: "edit", Description: "Edits a file.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"lines":{"type":"integer"}}}`),
		Execute: func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
			return toolregistry.TextResult("edited"), nil
		},
		Preview: func(_ context.Context, args json.RawMessage) (*permission.Preview, error) {
			var in struct{ Lines int }
			_ = json.Unmarshal(args, &in)
			var b strings.Builder
			b.WriteString("edit would change a.go\n--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-old \x1b]0;pwned\x07line\n")
			for i := range in.Lines {
				fmt.Fprintf(&b, "+new line %d\n", i+1)
			}
			return &permission.Preview{Kind: permission.PreviewDiff, Text: b.String()}, nil
		},
	}, {
		Name: "run", Description: "Runs a command.",
		Execute: func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
			return toolregistry.TextResult("ran"), nil
		},
		Preview: func(context.Context, json.RawMessage) (*permission.Preview, error) {
			return &permission.Preview{Kind: permission.PreviewCommand, Text: "$ go test ./...\n(in /src, timeout 2m0s)"}, nil
		},
	}} {
		if _, err := reg.Register(root, tl); err != nil {
			t.Fatal(err)
		}
	}
	var paged []string
	page := func(_ context.Context, text string) (bool, error) {
		if strings.Count(text, "\n") <= 20 {
			return false, nil
		}
		paged = append(paged, text)
		return true, nil
	}
	in := strings.NewReader("change it\ny\ny\ny\n/exit\n")
	var out bytes.Buffer
	if err := termchat.Run(ctxtest.Wait(t), termchat.Options{Caller: remote.NewLocal(root), In: in, Out: &out, Styled: true, Page: page}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"edit would change a.go\n\x1b[1m--- a/a.go\x1b[0m\n\x1b[1m+++ b/a.go\x1b[0m\n\x1b[36m@@ -1 +1 @@\x1b[0m\n\x1b[31m-old \\x1b]0;pwned\\x07" +
			"line\x1b[0m\n\x1b[32m+new line 1\x1b[0m\nAllow the agent to run edit",
		"$ go test ./...\n\x1b[2m(in /src, timeout 2m0s)\x1b[0m\nAllow the agent to run run",
		"Done.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%q", want, got)
		}
	}
	if strings.Contains(got, "\x1b]0;") {
		t.Error("the server's escape sequence reached the terminal")
	}
	if strings.Contains(got, "+new line 50") {
		t.Errorf("the long preview was printed, not paged:\n%s", got)
	}
	if len(paged) != 1 || !strings.Contains(paged[0], "\x1b[32m+new line 50\x1b[0m\n") || strings.Contains(paged[0], "\x1b]0;") {
		t.Errorf("paged: %q", paged)
	}
}
