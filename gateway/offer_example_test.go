package gateway_test

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/testkit/demotree"
)

// Offer runs before the fleet's clients connect, so that they declare elicitation to their
// servers from their first connection; the demo server's ask tool then asks the downstream
// client that called it. The downstream client here is connected to the aggregated route's
// server in memory, as `harness serve --stdio` connects it to its standard streams.
func ExampleOffer() {
	// Offered after the tool registry and before the client of the demo server mounts.
	tree, err := demotree.StartWith("demo", demotree.Options{BeforeClient: gateway.Offer})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tree.Close()

	gw, err := gateway.New(tree.Root, gateway.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = gw.Close() }()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := gw.Aggregated().Connect(context.Background(), st, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = ss.Close() }()

	c := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			fmt.Println("asked:", r.Params.Message)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "age": 36}}, nil
		},
	})
	// Server requests reach sessions initialized with the initialize handshake (2025-11-25).
	cs, err := c.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = cs.Close() }()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__demo__ask"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// asked: The demo server would like to know you better.
	// accept: age=36, color=green, name=Ada, subscribe=false
}
