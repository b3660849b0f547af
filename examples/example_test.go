package examples_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/examples"
	"github.com/cordisgo/harness/internal/demoserver"
	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newRoot returns a root whose logs are discarded (examples print what they show).
func newRoot() *ctx.Context { return ctx.New(ctx.Options{Logger: slog.New(slog.DiscardHandler)}) }

// registry returns the tool registry of root.
func registry(root *ctx.Context) *toolregistry.Registry {
	r, _ := toolregistry.Key.Get(root)
	return r
}

// plugin is a plugin without configuration whose apply is fn.
func plugin(name string, fn func(c *ctx.Context) error) *ctx.Def[struct{}] {
	return ctx.Define(ctx.Meta{Name: name}, func(c *ctx.Context, _ struct{}) error { return fn(c) })
}

// registerAdd is the "Reading a tool's arguments" example of docs/plugins.md.
func registerAdd(c *ctx.Context) error {
	_, err := toolregistry.Key.Use(c).Register(c, toolregistry.Tool{
		Name:        "add",
		Description: "Adds two numbers.",
		Parameters: []byte(`{"type":"object","properties":{
			"a":{"type":"number"},"b":{"type":"number","minimum":2}},
			"required":["a","b"],"additionalProperties":false}`),
		Execute: func(_ context.Context, call *toolregistry.Call) (*toolregistry.Result, error) {
			var args struct {
				A float64 `json:"a"`
				B float64 `json:"b"`
			}
			// call.Args has been validated against Parameters: decoding cannot fail on it.
			if err := json.Unmarshal(call.Args, &args); err != nil {
				return nil, err
			}
			return toolregistry.TextResult(fmt.Sprint(args.A + args.B)), nil
		},
	})
	return err
}

// A tool reads its validated arguments from call.Args; arguments that do not match the
// schema never reach it, and the model is told what is wrong.
func Example_toolArguments() {
	root := ctx.New(ctx.Options{})
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	_, _ = root.Plugin(toolregistry.Plugin, nil)
	calc := ctx.Define(ctx.Meta{Name: "calc", Inject: []ctx.Dependency{toolregistry.Key}}, func(c *ctx.Context, _ struct{}) error {
		return registerAdd(c)
	})
	_, _ = root.Plugin(calc, nil)
	_ = root.Settle(context.Background())

	tools, _ := toolregistry.Key.Get(root)
	for _, args := range []string{`{"a": 2, "b": 40}`, `{"a": 2}`, `{"a": 2, "b": 1}`, `{"a": "2", "b": 3}`} {
		res, err := tools.Execute(root, root, "add", json.RawMessage(args), toolregistry.ExecOptions{})
		if te, ok := errors.AsType[*toolregistry.ToolError](err); ok {
			fmt.Println(te.Msg) // what the model is told
			continue
		}
		fmt.Println(res.Text())
	}
	// Output:
	// 42
	// invalid arguments: missing required argument "b"
	// invalid arguments: argument "b": must be at least 2, got 1
	// invalid arguments: argument "a": expected a number, got a string
}

// closer is a connection that says when it is closed.
type closer string

func (c closer) Close() error {
	fmt.Println(string(c), "closed")
	return nil
}

var (
	polling = make(chan struct{}) // closed when poll runs
	dial    = func(context.Context) (io.Closer, error) { return closer("connection"), nil }
	poll    = func(runcx context.Context, _ io.Closer) error {
		close(polling)
		<-runcx.Done()
		fmt.Println("poller stopped")
		return nil
	}
)

// holdResources is the "Holding resources" example of docs/plugins.md.
func holdResources(c *ctx.Context) error {
	conn, err := dial(c) // c is a context.Context too: it ends when the scope unloads
	if err != nil {
		return err
	}
	if _, err := c.Defer("close connection", func(context.Context) error { return conn.Close() }); err != nil {
		return err // the scope is already unloading: Defer has closed conn at once
	}
	if _, err := c.Go("poller", func(runcx context.Context) error { // cancelled and joined on unload
		return poll(runcx, conn)
	}); err != nil {
		return err
	}
	return nil
}

// A scope's effects are undone when it unloads, newest first: the poller is stopped and
// joined, then the connection closed.
func Example_holdingResources() {
	root := newRoot()
	s, _ := root.Plugin(plugin("resources", holdResources), nil)
	_ = s.Wait(context.Background())
	<-polling
	fmt.Println(s.State())
	_ = root.Scope().Dispose(context.Background())
	// Output:
	// active
	// poller stopped
	// connection closed
}

// A listener is an effect of the context it is registered on; Emit calls the listeners in
// order.
func Example_events() {
	root := newRoot()
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	err := examples.Tick(root, time.Date(2026, 12, 3, 15, 4, 0, 0, time.UTC))
	fmt.Println(err)
	// Output:
	// ticked at 3:04PM
	// <nil>
}

func TestTick(t *testing.T) {
	root := ctxtest.New(t)
	ticks := ctxtest.Record(t, root, examples.Ticked)
	ticker := ctx.Define(ctx.Meta{Name: "ticker"}, func(c *ctx.Context, _ struct{}) error {
		return examples.Tick(c, time.Date(2026, 12, 3, 15, 4, 0, 0, time.UTC))
	})
	s := ctxtest.MountActive(t, root, ticker, nil)
	got := ticks.WaitFor(t, func(ev []time.Time) bool { return len(ev) > 0 })
	if len(got) != 1 || got[0].Hour() != 15 {
		t.Fatalf("ticks %v, want one at 15:04", got)
	}
	if err := s.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	ctxtest.RequireState(t, s, ctx.Disposed)
}

// askForProduction is the permission policy example of docs/plugins.md.
func askForProduction(c *ctx.Context) error {
	_, err := toolregistry.Policy.On(c, func(req *toolregistry.PolicyRequest, next func() (permission.Decision, error)) (permission.Decision, error) {
		if strings.HasPrefix(req.Tool.Name, "mcp__prod__") {
			return permission.Decision{Action: permission.Ask, Reason: "production server"}, nil
		}
		return next()
	})
	return err
}

// The policy is a chain: this link asks before any tool of the prod server runs and leaves
// the others to the next link. Without an approval service, asking denies.
func Example_policy() {
	root := newRoot()
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	_, _ = root.Plugin(toolregistry.Plugin, nil)
	_ = root.Settle(context.Background())
	tools := registry(root)
	for _, name := range []string{"mcp__prod__deploy", "mcp__dev__deploy"} {
		_, _ = tools.Register(root, toolregistry.Tool{Name: name, Execute: func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
			return toolregistry.TextResult("deployed"), nil
		}})
	}
	_ = askForProduction(root)
	for _, name := range []string{"mcp__prod__deploy", "mcp__dev__deploy"} {
		res, err := tools.Execute(root, root, name, nil, toolregistry.ExecOptions{})
		if err != nil {
			fmt.Println(err)
		} else {
			fmt.Println(name, res.Text())
		}
	}
	// Output:
	// tool "mcp__prod__deploy": denied: approval required (production server) but no approval service is mounted
	// mcp__dev__deploy deployed
}

// followServers is the "Following MCP servers" example of docs/plugins.md.
func followServers(c *ctx.Context) error {
	_, err := mcpclient.ProgressEvent.On(c, func(p mcpclient.Progress) error {
		if p.Done {
			fmt.Printf("%s/%s: done\n", p.Server, p.Target)
		} else {
			fmt.Printf("%s/%s: %v of %v %s\n", p.Server, p.Target, p.Progress, p.Total, p.Message)
		}
		return nil
	})
	if err != nil {
		return err
	}
	_, err = mcpclient.ServerLogEvent.On(c, func(l mcpclient.ServerLog) error {
		fmt.Println(l.Server, l.Level, l.Message)
		return nil
	})
	return err
}

// buildServer is an MCP server whose tool build reports progress once and logs once, each
// time waiting until the client has passed the notification on (seen), so that the
// example's output has one order.
func buildServer(seen <-chan struct{}) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "builder", Version: "1"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Logging: &mcp.LoggingCapabilities{}}, //nolint:staticcheck // SEP-2577: server logs stay for peers on protocol versions that have them (2025-11-25)
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "build"}, func(cx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		wait := func(err error) error {
			if err != nil {
				return err
			}
			select {
			case <-seen:
				return nil
			case <-cx.Done():
				return cx.Err()
			}
		}
		if err := wait(req.Session.NotifyProgress(cx, &mcp.ProgressNotificationParams{
			ProgressToken: req.Params.GetProgressToken(), Progress: 1, Total: 2, Message: "compiling"})); err != nil {
			return nil, nil, err
		}
		if err := wait(req.Session.Log(cx, &mcp.LoggingMessageParams{Level: "info", Data: "compiled 12 files"})); err != nil { //nolint:staticcheck // SEP-2577: server logs stay for peers on protocol versions that have them (2025-11-25)
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "built"}}}, nil, nil
	})
	return srv
}

// A listener on an ancestor hears the progress and the log messages of every MCP client
// below it.
func Example_followServers() {
	seen := make(chan struct{})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return buildServer(seen) }, nil))
	defer srv.Close()

	root := newRoot()
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	_ = followServers(root)
	signal := func() error { seen <- struct{}{}; return nil }
	_, _ = mcpclient.ProgressEvent.On(root, func(p mcpclient.Progress) error {
		if !p.Done {
			return signal()
		}
		return nil
	})
	_, _ = mcpclient.ServerLogEvent.On(root, func(mcpclient.ServerLog) error { return signal() })

	_, _ = root.Plugin(toolregistry.Plugin, nil)
	var cfg mcpclient.Config
	cfg.Default()
	cfg.ServerName, cfg.Transport, cfg.URL, cfg.LogLevel = "ci", mcpclient.TransportStreamableHTTP, srv.URL, "info"
	_, _ = root.Plugin(mcpclient.Plugin, cfg)
	_ = root.Settle(context.Background())

	res, err := registry(root).Execute(root, root, "mcp__ci__build", nil, toolregistry.ExecOptions{})
	fmt.Println(res.Text(), err)
	// Output:
	// ci/build: 1 of 2 compiling
	// ci info compiled 12 files
	// ci/build: done
	// built <nil>
}

// mountAgentServer is the agent-scope example of docs/plugins.md.
func mountAgentServer(c *ctx.Context, serverConfig mcpclient.Config) error {
	agent := c.Layered()
	_, err := agent.Plugin(mcpclient.Plugin, serverConfig) // this server's tools belong to this agent
	return err
}

// The tools of a server mounted in an agent scope are visible in that scope only.
func Example_agentScope() {
	h, closeSessions := demoserver.HandlerWithClose(demoserver.Options{})
	srv := httptest.NewServer(h)
	defer func() { closeSessions(); srv.Close() }()

	root := newRoot()
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	_, _ = root.Plugin(toolregistry.Plugin, nil)
	var cfg mcpclient.Config
	cfg.Default()
	cfg.ServerName, cfg.Transport, cfg.URL = "demo", mcpclient.TransportStreamableHTTP, srv.URL+"/mcp"
	reviewer := ctx.Define(ctx.Meta{Name: "reviewer"}, mountAgentServer)
	agent, _ := root.Plugin(reviewer, cfg)
	_ = root.Settle(context.Background())

	tools := registry(root)
	_, inRoot := tools.Lookup(root, "mcp__demo__echo")
	_, inAgent := tools.Lookup(agent.Context(), "mcp__demo__echo")
	fmt.Println("root sees mcp__demo__echo:", inRoot)
	fmt.Println("reviewer sees mcp__demo__echo:", inAgent)
	// Output:
	// root sees mcp__demo__echo: false
	// reviewer sees mcp__demo__echo: true
}
