//go:build unix

package interop

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpprompts"
)

// TestEverythingPrompts runs the prompts service against the reference server's prompts
// over stdio: the listing with its arguments, rendering with arguments (text and an
// embedded resource), the checks before a request, the server's own error, and
// completions of a prompt's arguments (narrowed by context) and of a resource template's.
func TestEverythingPrompts(t *testing.T) {
	srv := locate(t)
	cfg := newConfig(mcpclient.TransportStdio)
	cfg.Command = srv.node
	cfg.Args = []string{srv.entry, "stdio"}
	root := ctxtest.New(t)
	ctxtest.MountActive(t, root, mcpprompts.Plugin, nil)
	mountOn(t, root, cfg)
	svc, ok := mcpprompts.Key.Get(root)
	if !ok {
		t.Fatal("no mcpPrompts service")
	}
	cx := t.Context()

	ps, err := svc.List(cx, root, "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	byName := map[string]mcpprompts.Prompt{}
	for _, p := range ps {
		names = append(names, p.Name)
		byName[p.Name] = p
	}
	for _, want := range []string{"simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"} {
		if !slices.Contains(names, want) {
			t.Fatalf("prompts %v lack %s", names, want)
		}
	}
	if args := byName["args-prompt"].Arguments; len(args) != 2 || args[0].Name != "city" || !args[0].Required ||
		args[1].Name != "state" || args[1].Required || args[0].Description != "Name of the city" {
		t.Errorf("args-prompt arguments: %+v", args)
	}

	text := func(res *mcp.GetPromptResult, i int) string {
		t.Helper()
		tc, ok := res.Messages[i].Content.(*mcp.TextContent)
		if !ok {
			t.Fatalf("message %d is %T", i, res.Messages[i].Content)
		}
		return tc.Text
	}
	res, err := svc.Get(cx, root, serverName, "simple-prompt", nil)
	if err != nil || len(res.Messages) != 1 || text(res, 0) != "This is a simple prompt without arguments." {
		t.Fatalf("simple-prompt: %v %+v", err, res)
	}
	res, err = svc.Get(cx, root, serverName, "args-prompt", map[string]string{"city": "Paris", "state": "Texas"})
	if err != nil || text(res, 0) != "What's weather in Paris, Texas?" {
		t.Fatalf("args-prompt: %v %+v", err, res)
	}
	if _, err := svc.Get(cx, root, serverName, "args-prompt", map[string]string{"state": "Texas"}); !errors.Is(err, mcpprompts.ErrMissingArgument) ||
		!strings.Contains(err.Error(), `needs the argument "city"`) {
		t.Errorf("args-prompt without city: %v", err)
	}
	if _, err := svc.Get(cx, root, serverName, "simple-promt", nil); !errors.Is(err, mcpprompts.ErrUnknownPrompt) ||
		!strings.Contains(err.Error(), `did you mean "simple-prompt"?`) {
		t.Errorf("misspelt prompt: %v", err)
	}

	res, err = svc.Get(cx, root, serverName, "resource-prompt", map[string]string{"resourceType": "Text", "resourceId": "2"})
	if err != nil || len(res.Messages) != 2 {
		t.Fatalf("resource-prompt: %v %+v", err, res)
	}
	if er, ok := res.Messages[1].Content.(*mcp.EmbeddedResource); !ok || er.Resource == nil ||
		er.Resource.URI != "demo://resource/dynamic/text/2" || er.Resource.Text == "" {
		t.Errorf("resource-prompt's embedded resource: %#v", res.Messages[1].Content)
	}
	// The server's own refusal names the server and the prompt.
	_, err = svc.Get(cx, root, serverName, "resource-prompt", map[string]string{"resourceType": "Bogus", "resourceId": "2"})
	if pe, ok := errors.AsType[*mcpprompts.Error](err); !ok || pe.Server != serverName || pe.Prompt != "resource-prompt" ||
		!strings.Contains(err.Error(), "Invalid resourceType") {
		t.Errorf("resource-prompt with a bad type: %v", err)
	}

	complete := func(r mcpprompts.CompleteRequest) []string {
		t.Helper()
		r.Server = serverName
		got, err := svc.Complete(cx, root, r)
		if err != nil {
			t.Fatalf("complete %+v: %v", r, err)
		}
		return got.Values
	}
	if got := complete(mcpprompts.CompleteRequest{Prompt: "completable-prompt", Argument: "department", Value: "S"}); !slices.Equal(got, []string{"Sales", "Support"}) {
		t.Errorf("department completions: %v", got)
	}
	if got := complete(mcpprompts.CompleteRequest{Prompt: "completable-prompt", Argument: "name", Value: "",
		Context: map[string]string{"department": "Engineering"}}); !slices.Equal(got, []string{"Alice", "Bob", "Charlie"}) {
		t.Errorf("name completions in Engineering: %v", got)
	}
	if got := complete(mcpprompts.CompleteRequest{Prompt: "resource-prompt", Argument: "resourceType", Value: "B"}); !slices.Equal(got, []string{"Blob"}) {
		t.Errorf("resourceType completions: %v", got)
	}
	if got := complete(mcpprompts.CompleteRequest{URI: "demo://resource/dynamic/text/{resourceId}", Argument: "resourceId", Value: "7"}); !slices.Equal(got, []string{"7"}) {
		t.Errorf("resource template completions: %v", got)
	}
}
