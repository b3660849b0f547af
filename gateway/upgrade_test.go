package gateway_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/testkit/mcptest"
)

// versioned returns servers that say which start they are: version n, instructions "vn",
// the tool "t"; from the second start on, a prompt too (the prompts capability).
func versioned(starts *atomic.Int32) func() *mcp.Server {
	return func() *mcp.Server {
		n := starts.Add(1)
		srv := mcp.NewServer(&mcp.Implementation{Name: "up", Version: fmt.Sprint(n)}, &mcp.ServerOptions{Instructions: fmt.Sprint("v", n)})
		mcp.AddTool(srv, &mcp.Tool{Name: "t"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint("from ", n)}}}, nil, nil
		})
		if n >= 2 {
			srv.AddPrompt(&mcp.Prompt{Name: "p"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}}, nil
			})
		}
		return srv
	}
}

// A per-server route follows its upstream: after a reconnect to a server that answers with
// another identity, instructions and capabilities, new sessions see the new ones; a session
// opened before keeps what it initialized with and goes on working.
func TestServerRouteFollowsUpstream(t *testing.T) {
	var starts atomic.Int32
	up := mcptest.NewHTTP(t, versioned(&starts))
	root := newTree(t)
	mountHTTP(t, root, "up", up.URL())
	f := serveGateway(t, root, gateway.Options{})
	before := connect(t, f.url+"/mcp/servers/up", nil)
	if ir := before.InitializeResult(); ir.ServerInfo.Version != "1" || ir.Instructions != "v1" || ir.Capabilities.Prompts != nil {
		t.Fatalf("first session: %+v %+v", ir.ServerInfo, ir.Capabilities)
	}

	status := ctxtest.Record(t, root, mcpclient.StatusEvent)
	up.Restart()
	up.CloseSessions(0)
	status.WaitFor(t, func(s []mcpclient.Status) bool {
		return slices.ContainsFunc(s, func(st mcpclient.Status) bool { return st.Phase == mcpclient.PhaseConnected })
	})

	after := connect(t, f.url+"/mcp/servers/up", nil)
	ir := after.InitializeResult()
	if ir.ServerInfo.Version != "2" || ir.Instructions != "v2" || ir.Capabilities.Prompts == nil || ir.Capabilities.Tools == nil {
		t.Fatalf("session after the upgrade: %+v %q %+v", ir.ServerInfo, ir.Instructions, ir.Capabilities)
	}
	res, err := after.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "p"})
	if err != nil || len(res.Messages) != 1 {
		t.Fatalf("the new prompt: %v %+v", err, res)
	}
	if s, err := f.gw.Server("up"); err != nil || s == nil {
		t.Fatalf("Server: %v", err)
	}
	for _, cs := range []*mcp.ClientSession{before, after} {
		if got := call(t, cs, "t"); got != "from 2" {
			t.Fatalf("call: %q, want the new server's answer", got)
		}
	}
	if ir := before.InitializeResult(); ir.ServerInfo.Version != "1" {
		t.Fatalf("the earlier session changed: %+v", ir.ServerInfo)
	}
	if names := toolNames(t, before); !slices.Equal(names, []string{"t"}) {
		t.Fatalf("earlier session's tools %v", names)
	}
}
