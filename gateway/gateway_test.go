package gateway_test

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/internal/demoserver"
	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/testkit/gatewaytest"
	"github.com/cordisgo/harness/testkit/mcptest"
)

// TestMain serves the stdio test server when the binary is started as one (mcptest.Stdio).
func TestMain(m *testing.M) { mcptest.Main(m) }

const token = "test-token"

// fleet is a tree with the tools service and one MCP client per upstream, served by a
// gateway over httptest.
type fleet struct {
	root *ctx.Context
	gw   *gateway.Gateway
	url  string
}

// newTree is a root with the tool registry and the gateway's offers.
func newTree(t *testing.T) *ctx.Context {
	return gatewaytest.Tree(t, gatewaytest.TreeOptions{Offer: true})
}

func mountHTTP(t *testing.T, c *ctx.Context, name, url string) *ctx.Scope {
	t.Helper()
	var cfg mcpclient.Config
	cfg.Default()
	cfg.ServerName = name
	cfg.Transport = mcpclient.TransportStreamableHTTP
	cfg.URL = url
	return mountConfig(t, c, cfg)
}

// mountConfig mounts an MCP client with cfg on c and waits for its activation.
func mountConfig(t *testing.T, c *ctx.Context, cfg mcpclient.Config) *ctx.Scope {
	t.Helper()
	return ctxtest.MountActive(t, c, mcpclient.Plugin, cfg)
}

// subscribable serves a test server that accepts resource subscriptions over HTTP, and
// returns it with the configuration of a client of it called name on protocol 2025-11-25
// (where resources/unsubscribe is a request: its absence is observable).
func subscribable(t *testing.T, name string) (*mcptest.Subscribable, mcpclient.Config) {
	t.Helper()
	up := mcptest.NewSubscribable(true)
	h := mcptest.NewHTTP(t, func() *mcp.Server { return up.Server })
	var cfg mcpclient.Config
	cfg.Default()
	cfg.ServerName, cfg.Transport, cfg.URL = name, mcpclient.TransportStreamableHTTP, h.URL()
	cfg.ProtocolVersion = "2025-11-25"
	return up, cfg
}

// demoFleet is a fleet of one client, of the demo server ("demo"), served by a gateway with
// the default options.
func demoFleet(t *testing.T) *fleet {
	t.Helper()
	root := newTree(t)
	mountHTTP(t, root, "demo", demoUpstream(t))
	return serveGateway(t, root, gateway.Options{})
}

func serveGateway(t *testing.T, root *ctx.Context, opts gateway.Options) *fleet {
	t.Helper()
	gw, url := gatewaytest.Serve(t, root, opts, gateway.HTTPOptions{Token: token, Addr: "127.0.0.1:0"})
	return &fleet{root: root, gw: gw, url: url}
}

type bearer struct{ tok string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens a downstream go-sdk session on path; changed receives a value per
// tools/list_changed.
// dial connects c to the gateway's route at url with the test's token (opts may be nil);
// the session closes when the test ends.
func dial(t *testing.T, c *mcp.Client, url string, opts *mcp.ClientSessionOptions) *mcp.ClientSession {
	t.Helper()
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token}}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func connect(t *testing.T, url string, changed chan<- string) *mcp.ClientSession {
	t.Helper()
	opts := &mcp.ClientOptions{}
	if changed != nil {
		opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- "tools":
			default:
			}
		}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, opts)
	return dial(t, c, url, nil)
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	return listed(t, cs.Tools(t.Context(), nil), func(tool *mcp.Tool) string { return tool.Name })
}

// listed returns key of each item of a session's list (cs.Tools, cs.Resources, ...),
// failing the test on an error.
func listed[T any](t *testing.T, list iter.Seq2[T, error], key func(T) string) []string {
	t.Helper()
	var out []string
	for item, err := range list {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, key(item))
	}
	return out
}

// waitTools waits (bounded by the test's context) until the session lists name.
func waitTools(t *testing.T, cs *mcp.ClientSession, changed <-chan string, name string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for !slices.Contains(toolNames(t, cs), name) {
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("%s never listed: %v", name, toolNames(t, cs))
		}
	}
}

func demoUpstream(t *testing.T) string {
	t.Helper()
	h := mcptest.NewHTTP(t, func() *mcp.Server { return demoserver.New(demoserver.Options{}) })
	return h.URL()
}

func text(res *mcp.CallToolResult) string {
	if res == nil {
		return "(no result)"
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestAggregatedRoute(t *testing.T) {
	f := demoFleet(t)
	changed := make(chan string, 1)
	cs := connect(t, f.url+"/mcp", changed)
	waitTools(t, cs, changed, "mcp__demo__echo")

	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp__demo__echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError || text(res) != "hi" {
		t.Fatalf("echo: %v %+v", err, res)
	}
	// Structured content comes back as the server sent it.
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp__demo__add", Arguments: map[string]any{"a": 2, "b": 3}})
	if err != nil || res.IsError || !strings.Contains(string(mustJSON(t, res.StructuredContent)), `"sum":5`) {
		t.Fatalf("add: %v %+v", err, res)
	}
	// The registry validates arguments before the server sees them.
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp__demo__echo", Arguments: map[string]any{"text": 7}})
	if err != nil || !res.IsError {
		t.Fatalf("invalid arguments accepted: %v %+v", err, res)
	}
	// A server's own isError stays an error.
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp__demo__fail", Arguments: map[string]any{"message": "boom"}})
	if err != nil || !res.IsError || !strings.Contains(text(res), "boom") {
		t.Fatalf("fail: %v %+v", err, res)
	}

	// Resources under their own URIs, templates routed to the server.
	uris := listed(t, cs.Resources(t.Context(), nil), func(r *mcp.Resource) string { return r.URI })
	if !slices.Contains(uris, "demo://readme") {
		t.Fatalf("resources: %v", uris)
	}
	rr, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "demo://notes/42"})
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "42") {
		t.Fatalf("template read: %v %+v", err, rr)
	}

	// A backend change reaches the session as list_changed.
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp__demo__add_tool", Arguments: map[string]any{"name": "x"}}); err != nil {
		t.Fatal(err)
	}
	waitTools(t, cs, changed, "mcp__demo__extra_x")
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := jsonMarshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPolicyApplies(t *testing.T) {
	root := newTree(t)
	mountHTTP(t, root, "demo", demoUpstream(t))
	if _, err := toolregistry.Policy.On(root, func(req *toolregistry.PolicyRequest, next func() (permission.Decision, error)) (permission.Decision, error) {
		if req.Tool.Name == "mcp__demo__echo" {
			return permission.Decision{Action: permission.Deny, Reason: "no echoes here"}, nil
		}
		return next()
	}); err != nil {
		t.Fatal(err)
	}
	f := serveGateway(t, root, gateway.Options{})
	changed := make(chan string, 1)
	for _, path := range []string{"/mcp", "/mcp/servers/demo"} {
		cs := connect(t, f.url+path, changed)
		name := "mcp__demo__echo"
		if path != "/mcp" {
			name = "echo"
		}
		waitTools(t, cs, changed, name)
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "hi"}})
		if err != nil || !res.IsError || !strings.Contains(text(res), "no echoes here") {
			t.Fatalf("%s: policy not applied: %v %+v", path, err, res)
		}
	}
	var denied int
	for _, r := range mustGet(root).History() {
		if r.Outcome == toolregistry.CodeDenied {
			denied++
		}
	}
	if denied != 2 {
		t.Fatalf("history records %d denied calls, want 2", denied)
	}
}

func TestServerRoute(t *testing.T) {
	f := demoFleet(t)
	changed := make(chan string, 1)
	cs := connect(t, f.url+"/mcp/servers/demo", changed)
	if got := cs.InitializeResult().ServerInfo.Name; got != "" && got == "" {
		t.Fatalf("server info: %q", got)
	}
	waitTools(t, cs, changed, "echo")
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "raw"}})
	if err != nil || res.IsError || text(res) != "raw" {
		t.Fatalf("echo: %v %+v", err, res)
	}
	rr, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "demo://readme"})
	if err != nil || len(rr.Contents) == 0 {
		t.Fatalf("read: %v %+v", err, rr)
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "add_tool", Arguments: map[string]any{"name": "y"}}); err != nil {
		t.Fatal(err)
	}
	waitTools(t, cs, changed, "extra_y")
}

func TestRefusals(t *testing.T) {
	f := demoFleet(t)
	for _, tc := range []struct {
		name, path, host, origin, auth string
		want                           int
	}{
		{"no token", "/mcp", "", "", "", http.StatusUnauthorized},
		{"wrong token", "/mcp/servers/demo", "", "", "Bearer nope", http.StatusUnauthorized},
		{"rebinding host", "/mcp", "evil.example:80", "", "Bearer " + token, http.StatusForbidden},
		{"rebinding host on a server route", "/mcp/servers/demo", "evil.example", "", "Bearer " + token, http.StatusForbidden},
		{"foreign origin", "/mcp/agents/x", "", "https://evil.example", "Bearer " + token, http.StatusForbidden},
		{"unknown server", "/mcp/servers/nope", "", "", "Bearer " + token, http.StatusNotFound},
		{"unknown agent", "/mcp/agents/nope", "", "", "Bearer " + token, http.StatusNotFound},
		{"unknown path", "/other", "", "", "Bearer " + token, http.StatusNotFound},
		{"scheme in lower case", "/mcp", "", "", "bearer " + token, http.StatusOK},
		{"scheme in upper case", "/mcp/servers/demo", "", "", "BEARER  " + token, http.StatusOK},
		{"another scheme", "/mcp", "", "", "Basic " + token, http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, f.url+tc.path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
	for _, o := range []gateway.HTTPOptions{
		{NoAuth: true, Addr: "0.0.0.0:8931"},
		{NoAuth: true, Addr: ":8931"},
		{NoAuth: true, Addr: "192.168.1.2:80"},
		{Addr: "127.0.0.1:0"}, // no token
	} {
		if err := o.Check(); err == nil {
			t.Errorf("%+v accepted", o)
		}
		if _, err := f.gw.Handler(o); err == nil {
			t.Errorf("Handler(%+v) accepted", o)
		}
	}
	if err := (gateway.HTTPOptions{NoAuth: true, Addr: "127.0.0.1:0"}).Check(); err != nil {
		t.Errorf("loopback --no-auth refused: %v", err)
	}
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

func mustGet(c *ctx.Context) *toolregistry.Registry {
	r, _ := toolregistry.Key.Get(c)
	return r
}

// TestAgentRoute serves what one agent scope sees: its own server, the global ones minus
// its mask; the aggregated route does not see the agent's server.
func TestAgentRoute(t *testing.T) {
	root := newTree(t)
	url := demoUpstream(t)
	mountHTTP(t, root, "demo", url)
	agentCtx := make(chan *ctx.Context, 1)
	agent := ctx.Define(ctx.Meta{Name: "coder"}, func(c *ctx.Context, _ struct{}) error {
		layer := c.Layered()
		reg, _ := toolregistry.Key.Get(layer)
		if _, err := reg.Restrict(layer, nil, []string{"mcp__demo__add"}); err != nil {
			return err
		}
		var cfg mcpclient.Config
		cfg.Default()
		cfg.ServerName, cfg.Transport, cfg.URL = "inner", mcpclient.TransportStreamableHTTP, url
		if _, err := layer.Plugin(mcpclient.Plugin, cfg); err != nil {
			return err
		}
		agentCtx <- layer
		return nil
	})
	if _, err := root.Plugin(agent, nil); err != nil {
		t.Fatal(err)
	}
	layer := <-agentCtx
	if err := root.Settle(t.Context()); err != nil {
		t.Fatal(err)
	}
	f := serveGateway(t, root, gateway.Options{Agents: func() map[string]*ctx.Context { return map[string]*ctx.Context{"coder": layer} }})
	changed := make(chan string, 1)
	cs := connect(t, f.url+"/mcp/agents/coder", changed)
	waitTools(t, cs, changed, "mcp__inner__echo")
	names := toolNames(t, cs)
	if !slices.Contains(names, "mcp__demo__echo") || slices.Contains(names, "mcp__demo__add") {
		t.Fatalf("agent route lists %v: want the global echo, not the masked add", names)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp__inner__echo", Arguments: map[string]any{"text": "agent"}})
	if err != nil || res.IsError || text(res) != "agent" {
		t.Fatalf("agent echo: %v %+v", err, res)
	}
	agg := connect(t, f.url+"/mcp", nil)
	if names := toolNames(t, agg); slices.Contains(names, "mcp__inner__echo") || !slices.Contains(names, "mcp__demo__add") {
		t.Fatalf("aggregated route lists %v", names)
	}
}

// TestProgressAndCancellation: progress reaches the calling session only; a cancelled call
// is cancelled through the registry (recorded as cancelled).
func TestProgressAndCancellation(t *testing.T) {
	root := newTree(t)
	mountHTTP(t, root, "demo", demoUpstream(t))
	executed := make(chan toolregistry.Record, 16)
	if _, err := toolregistry.Executed.On(root, func(r toolregistry.Record) error {
		executed <- r
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	f := serveGateway(t, root, gateway.Options{})
	progress := func() (*mcp.ClientSession, chan *mcp.ProgressNotificationParams) {
		ch := make(chan *mcp.ProgressNotificationParams, 64)
		c := mcp.NewClient(&mcp.Implementation{Name: "p", Version: "1"}, &mcp.ClientOptions{
			ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { ch <- r.Params },
		})
		return dial(t, c, f.url+"/mcp", nil), ch
	}
	a, aProgress := progress()
	_, bProgress := progress()
	p := &mcp.CallToolParams{Name: "mcp__demo__slow", Arguments: map[string]any{"ms": 200}}
	p.SetProgressToken("mine")
	res, err := a.CallTool(t.Context(), p)
	if err != nil || res.IsError {
		t.Fatalf("slow: %v %+v", err, res)
	}
	<-executed
	if len(aProgress) == 0 {
		t.Fatal("the calling session got no progress")
	}
	for len(aProgress) > 0 {
		if got := <-aProgress; got.ProgressToken != "mine" {
			t.Fatalf("progress token %v, want the caller's", got.ProgressToken)
		}
	}
	if len(bProgress) != 0 {
		t.Fatalf("another session got %d progress notifications", len(bProgress))
	}

	cx, cancel := context.WithCancel(t.Context())
	p = &mcp.CallToolParams{Name: "mcp__demo__slow", Arguments: map[string]any{"ms": 600000}}
	p.SetProgressToken("cancel-me")
	done := make(chan error, 1)
	go func() {
		_, err := a.CallTool(cx, p)
		done <- err
	}()
	for got := <-aProgress; got.ProgressToken != "cancel-me"; got = <-aProgress {
		// a late notification of the first call: this one is not running upstream yet
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a cancelled call succeeded")
	}
	if r := <-executed; r.Outcome != toolregistry.CodeCancelled {
		t.Fatalf("recorded outcome %s, want cancelled", r.Outcome)
	}
}
