package app

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// promptsServer serves a go-sdk server with prompts over Streamable HTTP and returns its
// URL and a counter of the prompts/get requests it received.
func promptsServer(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	var gets atomic.Int64
	s := mcp.NewServer(&mcp.Implementation{Name: "cli-prompts", Version: "1"}, &mcp.ServerOptions{PageSize: 1})
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(cx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "prompts/get" {
				gets.Add(1)
			}
			return next(cx, method, req)
		}
	})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Description: "Greets someone\nin a style",
		Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}, {Name: "style"}}},
		func(_ context.Context, r *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			size := int64(2048)
			return &mcp.GetPromptResult{Description: "a greeting", Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "Greet " + r.Params.Arguments["name"] + "."}},
				{Role: "assistant", Content: &mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 1229)}},
				{Role: "user", Content: &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "notes://1", MIMEType: "text/plain", Text: "note one"}}},
				{Role: "user", Content: &mcp.ResourceLink{URI: "notes://2", Name: "second", MIMEType: "text/plain", Size: &size}},
			}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "broken"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return nil, errors.New("template exploded")
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(func() {
		for ss := range s.Sessions() {
			_ = ss.Close()
		}
		srv.Close()
	})
	return srv.URL, &gets
}

func TestPromptsList(t *testing.T) {
	t.Parallel()
	url, _ := promptsServer(t)
	p := []string{"-p", "cli", "--http", "notes=" + url}
	r := run(t, nil, append(p, "prompts", "list")...)
	r.expect(t, ExitOK, "SERVER  PROMPT  ARGUMENTS       DESCRIPTION", "")
	for _, want := range []string{"notes   broken  -", "notes   greet   <name> [style]  Greets someone; in a style"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("prompts list lacks %q:\n%s", want, r.stdout)
		}
	}
	r = run(t, nil, append(p, "prompts", "list", "notes", "--json")...)
	r.expect(t, ExitOK, "", "")
	var l struct {
		Prompts []struct {
			Server, Name string
			Arguments    []struct {
				Name     string
				Required bool
			}
		}
		Errors []any
	}
	if err := json.Unmarshal([]byte(r.stdout), &l); err != nil || len(l.Prompts) != 2 || l.Errors == nil ||
		l.Prompts[1].Name != "greet" || !l.Prompts[1].Arguments[0].Required || l.Prompts[1].Arguments[1].Required {
		t.Errorf("prompts list --json: %v\n%s", err, r.stdout)
	}
	run(t, nil, append(p, "prompts", "list", "nots")...).expect(t, ExitUsage, "", `no MCP server "nots" is visible; did you mean "notes"?`)
	run(t, nil, "-p", "cli", "prompts", "list").expect(t, ExitOK, "", "no prompts")
}

// The default profile's demo server has prompts: the commands work with no setup.
func TestPromptsOfTheDemoServer(t *testing.T) {
	t.Parallel()
	run(t, nil, "prompts", "list").expect(t, ExitOK, "demo    review  <file> [focus]  Asks for a review of a file, with an optional focus.", "")
	run(t, nil, "prompts", "get", "demo", "review", "--arg", "file=main.go").expect(t, ExitOK, "--- user ---\nPlease review main.go.\n", "")
	r := run(t, nil, "prompts", "get", "demo", "logo")
	r.expect(t, ExitOK, "--- user ---\n[image image/png, 92 B]\n\n--- user ---\n[resource demo://readme, text/markdown]\n# ", "")
	if !strings.HasSuffix(r.stdout, "--- assistant ---\n[resource link demo://logo.png \"logo.png\", image/png]\n") {
		t.Errorf("prompts get demo logo:\n%s", r.stdout)
	}
}

func TestPromptsGet(t *testing.T) {
	t.Parallel()
	url, gets := promptsServer(t)
	p := []string{"-p", "cli", "--http", "notes=" + url, "prompts", "get", "notes"}
	r := run(t, nil, append(p, "greet", "--arg", "name=Ada")...)
	r.expect(t, ExitOK, "", "")
	want := `--- user ---
Greet Ada.

--- assistant ---
[image image/png, 1.2 KiB]

--- user ---
[resource notes://1, text/plain]
note one

--- user ---
[resource link notes://2 "second", text/plain, 2.0 KiB]
`
	if r.stdout != want {
		t.Errorf("prompts get:\n%s\nwant:\n%s", r.stdout, want)
	}
	r = run(t, nil, append(p, "greet", "--arg", "name=Ada", "--json")...)
	var res mcp.GetPromptResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.Description != "a greeting" || len(res.Messages) != 4 {
		t.Errorf("prompts get --json: %v\n%s", err, r.stdout)
	}
	n := gets.Load()
	run(t, nil, append(p, "greet")...).expect(t, ExitUsage, "",
		`prompt "greet" of MCP server "notes" needs the argument "name" (required); give it with --arg NAME=VALUE`)
	run(t, nil, append(p, "greet", "--arg", "name=x", "--arg", "stlye=y")...).expect(t, ExitUsage, "", `did you mean "style"?`)
	run(t, nil, append(p, "gret")...).expect(t, ExitUsage, "", `MCP server "notes" has no prompt "gret"; did you mean "greet"?`)
	run(t, nil, append(p, "greet", "--arg", "name")...).expect(t, ExitUsage, "", `--arg "name": expected NAME=VALUE`)
	if gets.Load() != n {
		t.Error("a refused prompts get reached the server")
	}
	run(t, nil, append(p, "broken")...).expect(t, ExitFailure, "", `MCP server "notes": prompts/get "broken": `)
}
