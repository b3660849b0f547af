package gateway_test

import (
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/gateway"
)

// TestRouteSuffix: a per-server route also answers under a path ending in /mcp, for
// clients that guess the transport from the URL; other paths under it are still 404.
func TestRouteSuffix(t *testing.T) {
	f := demoFleet(t)
	cs := connect(t, f.url+gateway.PathServers+"demo"+gateway.PathSuffix, nil)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "suffixed"}})
	if err != nil || res.IsError || text(res) != "suffixed" {
		t.Fatalf("echo on %s: %v %+v", gateway.PathServers+"demo"+gateway.PathSuffix, err, res)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, nil)
	if cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: f.url + gateway.PathServers + "demo/other", HTTPClient: &http.Client{Transport: bearer{token}}}, nil); err == nil {
		_ = cs.Close()
		t.Fatal("a session on /mcp/servers/demo/other: want 404")
	}
}
