package mcpprompts_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpprompts"
	"github.com/cordisgo/harness/plugins/remote"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/testkit/mcptest"
)

func TestMain(m *testing.M) { mcptest.Main(m) }

// counts are the requests a test server received, by method.
type counts struct{ list, get, complete atomic.Int64 }

// promptServer is a go-sdk server with prompts, two to a page: greet (name required,
// style optional), plain (no arguments), broken (fails), p3 and p4; completions for greet's
// style and for the resource template notes://{id}.
func promptServer(n *counts) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "prompts-test", Version: "1"}, &mcp.ServerOptions{
		PageSize: 2,
		CompletionHandler: func(_ context.Context, r *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			n.complete.Add(1)
			p := r.Params
			var vals []string
			switch {
			case p.Ref.Type == "ref/prompt" && p.Ref.Name == "greet" && p.Argument.Name == "style":
				for _, v := range []string{"formal", "friendly", "pirate"} {
					if strings.HasPrefix(v, p.Argument.Value) {
						vals = append(vals, v)
					}
				}
				if p.Context != nil && p.Context.Arguments["name"] != "" {
					vals = append(vals, "for-"+p.Context.Arguments["name"])
				}
			case p.Ref.Type == "ref/resource" && p.Ref.URI == "notes://{id}":
				vals = []string{p.Argument.Value + "1", p.Argument.Value + "2"}
			}
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: vals, Total: len(vals)}}, nil
		},
	})
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(cx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "prompts/list":
				n.list.Add(1)
			case "prompts/get":
				n.get.Add(1)
			}
			return next(cx, method, req)
		}
	})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Title: "Greeting", Description: "greets someone",
		Arguments: []*mcp.PromptArgument{{Name: "name", Description: "who", Required: true}, {Name: "style"}}},
		func(_ context.Context, r *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			a := r.Params.Arguments
			return &mcp.GetPromptResult{Description: "a greeting", Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: fmt.Sprintf("Greet %s (%s).", a["name"], a["style"])}},
				{Role: "assistant", Content: &mcp.ImageContent{MIMEType: "image/png", Data: []byte("png")}},
			}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "plain"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "plain"}}}}, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "broken"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return nil, errors.New("template exploded")
	})
	for _, name := range []string{"p3", "p4"} {
		s.AddPrompt(&mcp.Prompt{Name: name}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{}, nil
		})
	}
	return s
}

// tree is a root with the tools service and the prompts service.
type tree struct {
	root *ctx.Context
	svc  *mcpprompts.Service
}

func newTree(t *testing.T) *tree {
	t.Helper()
	root := ctxtest.New(t)
	ctxtest.MountActive(t, root, toolregistry.Plugin, nil)
	svc := ctxtest.MountService(t, root, mcpprompts.Plugin, nil, mcpprompts.Key)
	return &tree{root: root, svc: svc}
}

// mount connects an MCP client called name to url (Streamable HTTP) in c's scope.
func mount(t *testing.T, c *ctx.Context, name, url string) *ctx.Scope {
	t.Helper()
	var cfg mcpclient.Config
	cfg.Default()
	cfg.ServerName, cfg.Transport, cfg.URL = name, mcpclient.TransportStreamableHTTP, url
	return ctxtest.MountActive(t, c, mcpclient.Plugin, cfg)
}

func names(ps []mcpprompts.Prompt) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Server+"/"+p.Name)
	}
	return out
}

func TestListPaginatesWithArguments(t *testing.T) {
	tr := newTree(t)
	var n counts
	mount(t, tr.root, "alpha", mcptest.NewHTTP(t, func() *mcp.Server { return promptServer(&n) }).URL())
	mount(t, tr.root, "tools", mcptest.NewHTTP(t, nil).URL()) // no prompts capability

	ps, err := tr.svc.List(t.Context(), tr.root, "")
	if err != nil {
		t.Fatal(err)
	}
	// The SDK's server lists prompts sorted by name.
	want := []string{"alpha/broken", "alpha/greet", "alpha/p3", "alpha/p4", "alpha/plain"}
	if got := names(ps); !slices.Equal(got, want) {
		t.Fatalf("prompts: %v, want %v", got, want)
	}
	if got := n.list.Load(); got != 3 {
		t.Errorf("prompts/list requests: %d, want 3 (pages of two)", got)
	}
	greet := ps[1]
	if greet.Title != "Greeting" || greet.Description != "greets someone" ||
		!slices.Equal(greet.Arguments, []mcpprompts.Argument{{Name: "name", Description: "who", Required: true}, {Name: "style"}}) {
		t.Errorf("greet: %+v", greet)
	}
	if ps[0].Arguments == nil {
		t.Error("a prompt without arguments has nil Arguments, want empty")
	}

	// The listing is cached: no more requests, and the caller's copy is its own.
	ps[1].Arguments[0].Name = "changed"
	again, err := tr.svc.List(t.Context(), tr.root, "alpha")
	if err != nil || n.list.Load() != 3 {
		t.Fatalf("second listing: %v, %d requests", err, n.list.Load())
	}
	if again[1].Arguments[0].Name != "name" {
		t.Error("a caller's change reached the cache")
	}
	if ps, err := tr.svc.List(t.Context(), tr.root, "tools"); err != nil || len(ps) != 0 {
		t.Errorf("server without prompts: %v %v", ps, err)
	}
}

func TestListChangedAndReconnectRefresh(t *testing.T) {
	tr := newTree(t)
	var n counts
	var srv atomic.Pointer[mcp.Server]
	h := mcptest.NewHTTP(t, func() *mcp.Server { s := promptServer(&n); srv.Store(s); return s })
	mount(t, tr.root, "alpha", h.URL())
	changed := ctxtest.Record(t, tr.root, mcpprompts.Changed)

	if _, err := tr.svc.List(t.Context(), tr.root, "alpha"); err != nil {
		t.Fatal(err)
	}
	srv.Load().AddPrompt(&mcp.Prompt{Name: "late"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	changed.WaitFor(t, func(s []string) bool { return slices.Contains(s, "alpha") })
	ps, err := tr.svc.List(t.Context(), tr.root, "alpha")
	if err != nil || !slices.Contains(names(ps), "alpha/late") {
		t.Fatalf("after list_changed: %v %v", names(ps), err)
	}

	// A reconnect is a new session, listed afresh: the restarted server has no "late".
	changed.Reset()
	connected := ctxtest.Record(t, tr.root, mcpclient.StatusEvent)
	h.Restart()
	h.CloseSessions(0)
	connected.WaitFor(t, func(s []mcpclient.Status) bool {
		return slices.ContainsFunc(s, func(st mcpclient.Status) bool { return st.Phase == mcpclient.PhaseConnected })
	})
	changed.WaitFor(t, func(s []string) bool { return len(s) > 0 })
	ps, err = tr.svc.List(t.Context(), tr.root, "alpha")
	if err != nil || slices.Contains(names(ps), "alpha/late") || len(ps) != 5 {
		t.Fatalf("after reconnect: %v %v", names(ps), err)
	}
}

func TestGet(t *testing.T) {
	tr := newTree(t)
	var n counts
	mount(t, tr.root, "alpha", mcptest.NewHTTP(t, func() *mcp.Server { return promptServer(&n) }).URL())
	cx := t.Context()

	res, err := tr.svc.Get(cx, tr.root, "alpha", "greet", map[string]string{"name": "Ada", "style": "formal"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Description != "a greeting" || len(res.Messages) != 2 || res.Messages[0].Role != "user" ||
		res.Messages[0].Content.(*mcp.TextContent).Text != "Greet Ada (formal)." {
		b, _ := json.Marshal(res)
		t.Fatalf("greet: %s", b)
	}
	if img, ok := res.Messages[1].Content.(*mcp.ImageContent); !ok || img.MIMEType != "image/png" {
		t.Errorf("image message: %#v", res.Messages[1].Content)
	}

	gets := n.get.Load()
	for _, c := range []struct {
		server, prompt string
		args           map[string]string
		cause          error
		msg            string
	}{
		{"alpha", "greet", map[string]string{"style": "x"}, mcpprompts.ErrMissingArgument,
			`prompt "greet" of MCP server "alpha" needs the argument "name" (required)`},
		{"alpha", "greet", map[string]string{"name": "x", "stlye": "y"}, mcpprompts.ErrUnknownArgument,
			`prompt "greet" of MCP server "alpha" has no argument "stlye"; did you mean "style"?`},
		{"alpha", "gret", nil, mcpprompts.ErrUnknownPrompt, `MCP server "alpha" has no prompt "gret"; did you mean "greet"?`},
		{"alpha", "zzzzzzzz", nil, mcpprompts.ErrUnknownPrompt,
			`MCP server "alpha" has no prompt "zzzzzzzz" (its prompts: broken, greet, p3, p4, plain)`},
		{"alpah", "greet", nil, mcpprompts.ErrUnknownServer, `no MCP server "alpah" is visible; did you mean "alpha"?`},
	} {
		_, err := tr.svc.Get(cx, tr.root, c.server, c.prompt, c.args)
		var pe *mcpprompts.Error
		if !errors.Is(err, c.cause) || !errors.As(err, &pe) || err.Error() != c.msg || pe.Server != c.server || pe.Prompt != c.prompt {
			t.Errorf("Get(%s, %s, %v): %v, want %q", c.server, c.prompt, c.args, err, c.msg)
		}
	}
	if got := n.get.Load(); got != gets {
		t.Errorf("refused gets reached the server: %d requests", got-gets)
	}

	// The server's own failure names the server and the prompt.
	_, err = tr.svc.Get(cx, tr.root, "alpha", "broken", nil)
	if pe, ok := errors.AsType[*mcpprompts.Error](err); !ok || pe.Server != "alpha" || pe.Prompt != "broken" ||
		!strings.Contains(err.Error(), `MCP server "alpha": prompts/get "broken": `) || !strings.Contains(err.Error(), "template exploded") {
		t.Errorf("broken: %v", err)
	}
}

func TestComplete(t *testing.T) {
	tr := newTree(t)
	var n counts
	mount(t, tr.root, "alpha", mcptest.NewHTTP(t, func() *mcp.Server { return promptServer(&n) }).URL())
	mount(t, tr.root, "tools", mcptest.NewHTTP(t, nil).URL())
	cx := t.Context()

	got, err := tr.svc.Complete(cx, tr.root, mcpprompts.CompleteRequest{Server: "alpha", Prompt: "greet", Argument: "style", Value: "f",
		Context: map[string]string{"name": "Ada"}})
	if err != nil || !slices.Equal(got.Values, []string{"formal", "friendly", "for-Ada"}) || got.Total != 3 {
		t.Fatalf("prompt completion: %+v %v", got, err)
	}
	got, err = tr.svc.Complete(cx, tr.root, mcpprompts.CompleteRequest{Server: "alpha", URI: "notes://{id}", Argument: "id", Value: "4"})
	if err != nil || !slices.Equal(got.Values, []string{"41", "42"}) {
		t.Fatalf("resource completion: %+v %v", got, err)
	}
	// No completions capability: no values, no request.
	got, err = tr.svc.Complete(cx, tr.root, mcpprompts.CompleteRequest{Server: "tools", URI: "x://{y}", Argument: "y"})
	if err != nil || got.Values == nil || len(got.Values) != 0 {
		t.Fatalf("server without completions: %+v %v", got, err)
	}

	before := n.complete.Load()
	for _, c := range []struct {
		r     mcpprompts.CompleteRequest
		cause error
	}{
		{mcpprompts.CompleteRequest{Server: "alpha", Prompt: "greet", Argument: "styel"}, mcpprompts.ErrUnknownArgument},
		{mcpprompts.CompleteRequest{Server: "alpha", Prompt: "nope", Argument: "x"}, mcpprompts.ErrUnknownPrompt},
		{mcpprompts.CompleteRequest{Server: "alpha", Argument: "x"}, mcpprompts.ErrInvalidRequest},
		{mcpprompts.CompleteRequest{Server: "alpha", Prompt: "greet", URI: "x", Argument: "x"}, mcpprompts.ErrInvalidRequest},
		{mcpprompts.CompleteRequest{Server: "beta", Prompt: "greet", Argument: "x"}, mcpprompts.ErrUnknownServer},
	} {
		if _, err := tr.svc.Complete(cx, tr.root, c.r); !errors.Is(err, c.cause) {
			t.Errorf("Complete(%+v): %v, want %v", c.r, err, c.cause)
		}
	}
	if n.complete.Load() != before {
		t.Error("a refused completion reached the server")
	}
}

// Agent scopes see their own servers and those of enclosing layers, never a sibling's.
func TestScopes(t *testing.T) {
	tr := newTree(t)
	var n counts
	url := mcptest.NewHTTP(t, func() *mcp.Server { return promptServer(&n) }).URL()
	mount(t, tr.root, "shared", url)
	agentCtx := func(name string) *ctx.Context {
		var c *ctx.Context
		ctxtest.MountActive(t, tr.root, ctx.Define(ctx.Meta{Name: name}, func(a *ctx.Context, _ struct{}) error {
			c = a.Layered()
			return nil
		}), nil)
		return c
	}
	a, b := agentCtx("agent-a"), agentCtx("agent-b")
	mount(t, a, "own", url)
	servers := func(c *ctx.Context) []string {
		ps, err := tr.svc.List(t.Context(), c, "")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range ps {
			if !slices.Contains(out, p.Server) {
				out = append(out, p.Server)
			}
		}
		return out
	}
	if got := servers(a); !slices.Equal(got, []string{"own", "shared"}) {
		t.Errorf("agent a sees %v", got)
	}
	if got := servers(b); !slices.Equal(got, []string{"shared"}) {
		t.Errorf("agent b sees %v", got)
	}
	if _, err := tr.svc.Get(t.Context(), b, "own", "plain", nil); !errors.Is(err, mcpprompts.ErrUnknownServer) {
		t.Errorf("agent b got a's server: %v", err)
	}
}

func TestRemoteMethods(t *testing.T) {
	tr := newTree(t)
	var n counts
	var srv atomic.Pointer[mcp.Server]
	mount(t, tr.root, "alpha", mcptest.NewHTTP(t, func() *mcp.Server { s := promptServer(&n); srv.Store(s); return s }).URL())
	call := func(method, params string) (string, error) {
		m, ok := tr.root.RemoteMethod(method)
		if !ok {
			t.Fatalf("%s is not exposed", method)
		}
		v, err := m.Call(t.Context(), json.RawMessage(params))
		if err != nil {
			return "", err
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b), nil
	}
	out, err := call("prompts/list", `{}`)
	if err != nil || !strings.Contains(out, `{"server":"alpha","name":"greet","title":"Greeting","description":"greets someone","arguments":[{"name":"name","description":"who","required":true},{"name":"style","required":false}]}`) ||
		!strings.HasSuffix(out, `"errors":[]}`) {
		t.Errorf("prompts/list: %s %v", out, err)
	}
	out, err = call("prompts/get", `{"server": "alpha", "name": "greet", "arguments": {"name": "Ada"}}`)
	if err != nil || !strings.Contains(out, `"messages":[{"content":{"type":"text","text":"Greet Ada ()."},"role":"user"}`) {
		t.Errorf("prompts/get: %s %v", out, err)
	}
	out, err = call("prompts/complete", `{"server": "alpha", "prompt": "greet", "argument": "style", "value": "p"}`)
	if err != nil || out != `{"total":1,"values":["pirate"]}` {
		t.Errorf("prompts/complete: %s %v", out, err)
	}
	// prompts/watch: everything at once, then the server whose prompts changed.
	watch, ok := tr.root.RemoteMethod("prompts/watch")
	if !ok {
		t.Fatal("prompts/watch is not exposed")
	}
	wcx, cancel := context.WithCancel(t.Context())
	changes := make(chan mcpprompts.Change, 8)
	done := make(chan error, 1)
	go func() {
		done <- watch.Stream(wcx, nil, func(v any) error { changes <- v.(mcpprompts.Change); return nil })
	}()
	if c := <-changes; c.Server != "" {
		t.Errorf("first change %+v, want every server", c)
	}
	srv.Load().AddPrompt(&mcp.Prompt{Name: "late"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	if c := <-changes; c.Server != "alpha" {
		t.Errorf("change %+v, want alpha", c)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("prompts/watch ended with %v", err)
	}

	codes := map[string]remote.Code{
		`{"server": "alpha", "name": "greet"}`:           "bad_request",
		`{"server": "alpha", "name": "nope"}`:            "not_found",
		`{"server": "alpha"}`:                            "bad_request",
		`{"server": "alpha", "name": "greet", "bad": 1}`: "bad_request",
	}
	for params, code := range codes {
		_, err := call("prompts/get", params)
		if err == nil || remote.CodeOf(err) != code {
			t.Errorf("prompts/get %s: %v, want code %s", params, err, code)
		}
	}
}

// A server that is not connected is named beside the prompts of the others.
func TestListReportsUnavailableServers(t *testing.T) {
	tr := newTree(t)
	var n counts
	mount(t, tr.root, "alpha", mcptest.NewHTTP(t, func() *mcp.Server { return promptServer(&n) }).URL())
	var cfg mcpclient.Config
	cfg.Default()
	cfg.ServerName, cfg.Transport, cfg.URL = "dead", mcpclient.TransportStreamableHTTP, "http://127.0.0.1:1/mcp" // refused
	cfg.Reconnect.Enabled = false
	failed := ctxtest.Record(t, tr.root, mcpclient.StatusEvent)
	ctxtest.Mount(t, tr.root, mcpclient.Plugin, cfg)
	failed.WaitFor(t, func(s []mcpclient.Status) bool {
		return slices.ContainsFunc(s, func(st mcpclient.Status) bool { return st.Server == "dead" && st.Phase == mcpclient.PhaseFailed })
	})
	ps, err := tr.svc.List(t.Context(), tr.root, "")
	if len(ps) != 5 || !errors.Is(err, mcpprompts.ErrNotConnected) || !strings.Contains(err.Error(), `MCP server "dead" is not connected`) {
		t.Fatalf("listing: %v, %v", names(ps), err)
	}
}

// Servers are listed in parallel: one that never answers costs the caller its deadline, not
// the prompts of the others, and is named in the error.
func TestListDoesNotWaitForAHungServer(t *testing.T) {
	tr := newTree(t)
	var n counts
	mount(t, tr.root, "alpha", mcptest.NewHTTP(t, func() *mcp.Server { return promptServer(&n) }).URL())
	mount(t, tr.root, "hung", mcptest.NewHTTP(t, func() *mcp.Server {
		s := promptServer(&counts{})
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(cx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "prompts/list" {
					<-cx.Done()
					return nil, cx.Err()
				}
				return next(cx, method, req)
			}
		})
		return s
	}).URL())
	cx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	ps, err := tr.svc.List(cx, tr.root, "")
	var pe *mcpprompts.Error
	if len(ps) != 5 || ps[0].Server != "alpha" || !errors.As(err, &pe) || pe.Server != "hung" ||
		!strings.Contains(err.Error(), `MCP server "hung": prompts/list: `) {
		t.Fatalf("listing: %v, %v", names(ps), err)
	}
}
