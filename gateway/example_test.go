package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/testkit/demotree"
)

// A tree with one MCP server, served by a gateway over Streamable HTTP: a downstream client
// calls the server's tool by its public name on the aggregated route, and by its own name on
// the per-server route.
func Example() {
	tree, err := demotree.Start("demo") // the tool registry and a client of the demo server
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tree.Close()
	root := tree.Root

	gw, err := gateway.New(root, gateway.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	token := gateway.NewToken()
	handler, err := gw.Handler(gateway.HTTPOptions{Token: token, Addr: "127.0.0.1:0"})
	if err != nil {
		fmt.Println(err)
		return
	}
	front := httptest.NewServer(handler)
	defer func() { _ = gw.Close(); front.Close() }()

	for _, route := range []struct{ path, tool string }{{gateway.PathAggregated, "mcp__demo__echo"}, {gateway.PathServers + "demo", "echo"}} {
		c := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
			Endpoint: front.URL + route.path, HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: route.tool, Arguments: map[string]any{"text": "hello"}})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s %s: %s\n", route.path, route.tool, res.Content[0].(*mcp.TextContent).Text)
		_ = cs.Close()
	}
	// Output:
	// /mcp mcp__demo__echo: hello
	// /mcp/servers/demo echo: hello
}
