package gateway_test

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/internal/demoserver"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpclient/catalog"
	"github.com/cordisgo/harness/testkit/mcptest"
)

// The search route over a lazy server: its cached tools are searched without starting it;
// a search that finds one of them starts it in the background, and the found tool runs.
func TestSearchRouteLazyServer(t *testing.T) {
	dir := t.TempDir() // before the tree, so that it is removed after the tree is disposed
	root := newTree(t)
	store, err := catalog.Open(catalog.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := catalog.Key.Provide(root, store); err != nil {
		t.Fatal(err)
	}
	var sessions atomic.Int32 // initialize requests: the client's starts
	up := mcptest.NewHTTP(t, func() *mcp.Server {
		srv := demoserver.New(demoserver.Options{})
		srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(cx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "initialize" {
					sessions.Add(1)
				}
				return next(cx, method, req)
			}
		})
		return srv
	})
	var cfg mcpclient.Config
	cfg.Default()
	cfg.ServerName, cfg.Transport, cfg.URL, cfg.Startup = "demo", mcpclient.TransportStreamableHTTP, up.URL(), mcpclient.StartupLazy
	// the first mount has no cache entry: the server starts once to fill it
	first := mountConfig(t, root, cfg)
	if err := first.Dispose(t.Context()); err != nil {
		t.Fatal(err)
	}
	started := sessions.Load()
	if started != 1 {
		t.Fatalf("%d starts to fill the cache, want 1", started)
	}

	status := ctxtest.Record(t, root, mcpclient.StatusEvent)
	mountConfig(t, root, cfg)
	status.WaitFor(t, func(s []mcpclient.Status) bool {
		return slices.ContainsFunc(s, func(st mcpclient.Status) bool { return st.Phase == mcpclient.PhaseLazy })
	})
	f := serveGateway(t, root, gateway.Options{})
	cs := connect(t, f.url+gateway.PathSearch, nil)
	if n := sessions.Load(); n != started {
		t.Fatalf("the lazy server was started before a search found its tools (%d sessions, %d before)", n, started)
	}
	res := callTool(t, cs, "tool_search", map[string]any{"query": "add two numbers", "limit": 2})
	if got := text(res); !strings.Contains(got, "mcp__demo__add") {
		t.Fatalf("tool_search over the cached tools: %q", got)
	}
	// the hit starts the server in the background
	status.WaitFor(t, func(s []mcpclient.Status) bool {
		return slices.ContainsFunc(s, func(st mcpclient.Status) bool { return st.Phase == mcpclient.PhaseConnected })
	})
	if n := sessions.Load(); n != started+1 {
		t.Fatalf("%d starts after the search, want one more than %d", n, started)
	}
	if got := text(callTool(t, cs, gateway.CallToolName, map[string]any{"name": "mcp__demo__add", "arguments": map[string]any{"a": 2, "b": 40}})); !strings.Contains(got, "42") {
		t.Fatalf("the found tool: %q", got)
	}
}
