package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/elicitation"
	"github.com/cordisgo/harness/plugins/console"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// tools registers a server-like tool, an image tool and a tool of no server.
var tools = ctx.Define(ctx.Meta{Name: "tools-under-test", Inject: []ctx.Dependency{toolregistry.Key}},
	func(c *ctx.Context, _ struct{}) error {
		reg := toolregistry.Key.Use(c)
		for _, t := range []toolregistry.Tool{
			{Name: "mcp__demo__echo", Description: "Echoes.", Meta: map[string]string{"server": "demo", "mcpTool": "echo"},
				Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
				Execute: func(_ context.Context, call *toolregistry.Call) (*toolregistry.Result, error) {
					var in struct{ Text string }
					if err := json.Unmarshal(call.Args, &in); err != nil {
						return nil, err
					}
					return &toolregistry.Result{Content: []toolregistry.Content{toolregistry.Text(in.Text)}, Structured: json.RawMessage(`{"n":1}`)}, nil
				}},
			{Name: "mcp__demo__image", Meta: map[string]string{"server": "demo"},
				Execute: func(_ context.Context, call *toolregistry.Call) (*toolregistry.Result, error) {
					a, err := call.Attachments.Put("image/png", []byte("png!"))
					if err != nil {
						return nil, err
					}
					return &toolregistry.Result{Content: []toolregistry.Content{toolregistry.Image(a)}}, nil
				}},
			{Name: "clock", Execute: func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
				return toolregistry.TextResult("noon"), nil
			}},
		} {
			if _, err := reg.Register(c, t); err != nil {
				return err
			}
		}
		return nil
	})

func newTree(t testing.TB) *ctx.Context {
	root := ctxtest.New(t)
	ctxtest.MountActive(t, root, toolregistry.Plugin, nil)
	ctxtest.MountActive(t, root, tools, nil)
	ctxtest.MountActive(t, root, console.Plugin, nil)
	return root
}

func call[T any](t *testing.T, root *ctx.Context, method, params string) (T, error) {
	t.Helper()
	var out T
	m, ok := root.RemoteMethod(method)
	if !ok || m.Call == nil {
		t.Fatalf("no remote method %s", method)
	}
	v, err := m.Call(ctxtest.Wait(t), json.RawMessage(params))
	if err != nil {
		return out, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out, nil
}

func TestTools(t *testing.T) {
	root := newTree(t)
	got, err := call[[]console.Tool](t, root, "console/tools", `{"server":"demo"}`)
	if err != nil || len(got) != 2 || got[0].Name != "mcp__demo__echo" || got[0].MCPTool != "echo" || !strings.Contains(string(got[0].Parameters), `"required"`) {
		t.Fatalf("tools of demo: %+v %v", got, err)
	}
	all, _ := call[[]console.Tool](t, root, "console/tools", `{}`)
	if len(all) != 3 {
		t.Fatalf("every tool: %+v", all)
	}
	if _, err := call[any](t, root, "console/tools", `{"nope":1}`); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("unknown parameter: %v", err)
	}
}

func TestCallTool(t *testing.T) {
	root := newTree(t)
	r, err := call[console.CallResult](t, root, "console/callTool", `{"tool":"mcp__demo__echo","args":{"text":"hi"}}`)
	if err != nil || r.IsError || len(r.Content) != 1 || r.Content[0].Text != "hi" || string(r.Structured) != `{"n":1}` || !strings.HasPrefix(r.CallID, "console_") {
		t.Fatalf("echo: %+v %v", r, err)
	}
	// The registry's pipeline validates the arguments.
	r, err = call[console.CallResult](t, root, "console/callTool", `{"tool":"mcp__demo__echo","args":{}}`)
	if err != nil || !r.IsError || r.Code != string(toolregistry.CodeInvalidArgs) {
		t.Fatalf("invalid arguments: %+v %v", r, err)
	}
	r, _ = call[console.CallResult](t, root, "console/callTool", `{"tool":"nope"}`)
	if !r.IsError || r.Code != string(toolregistry.CodeUnknownTool) {
		t.Fatalf("unknown tool: %+v", r)
	}
	// Images travel as data: URLs.
	r, _ = call[console.CallResult](t, root, "console/callTool", `{"tool":"mcp__demo__image"}`)
	if len(r.Content) != 1 || r.Content[0].DataURL != "data:image/png;base64,cG5nIQ==" {
		t.Fatalf("image: %+v", r)
	}
	// The call is in the tools service's history.
	reg, _ := toolregistry.Key.Get(root)
	if h := reg.History(); len(h) == 0 || !strings.HasPrefix(h[len(h)-1].CallID, "console_") {
		t.Fatalf("history: %+v", h)
	}
	if _, err := call[any](t, root, "console/callTool", `{}`); err == nil {
		t.Fatal("a call without a tool was accepted")
	}
}

func TestInstructionsWithoutPromptService(t *testing.T) {
	root := newTree(t)
	got, err := call[console.Instructions](t, root, "console/instructions", `{"server":"demo"}`)
	if err != nil || got.Text != "" {
		t.Fatalf("instructions: %+v %v", got, err)
	}
	if _, err := call[any](t, root, "console/instructions", `{}`); err == nil {
		t.Fatal("no server accepted")
	}
}

// The console's methods are remote methods of the tree: the remote plugin serves them.
func Example() {
	root := ctx.New(ctx.Options{Logger: slog.New(slog.DiscardHandler)})
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	for _, p := range []ctx.PluginDef{toolregistry.Plugin, tools, console.Plugin} {
		if _, err := root.Plugin(p, nil); err != nil {
			panic(err)
		}
	}
	if err := root.Settle(context.Background()); err != nil {
		panic(err)
	}
	m, _ := root.RemoteMethod("console/callTool")
	res, err := m.Call(context.Background(), json.RawMessage(`{"tool":"mcp__demo__echo","args":{"text":"hello"}}`))
	r := res.(console.CallResult)
	fmt.Println(r.Content[0].Text, r.IsError, err)
	// Output: hello false <nil>
}

// The console is the page's elicitation responder: the MCP clients below it declare
// elicitation (form and URL) and its questions stream to the page.
func Example_elicitationResponder() {
	root := ctx.New(ctx.Options{Logger: slog.New(slog.DiscardHandler)})
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	for _, p := range []ctx.PluginDef{toolregistry.Plugin, console.Plugin} {
		if _, err := root.Plugin(p, nil); err != nil {
			panic(err)
		}
	}
	if err := root.Settle(context.Background()); err != nil {
		panic(err)
	}
	fmt.Println(elicitation.Modes(root))
	_, ok := root.RemoteMethod("console/elicitations")
	fmt.Println(ok)
	// Output:
	// [form url]
	// true
}
