package demoserver_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/internal/demoserver"
)

// ExampleNew connects a client to a demo server in memory and calls echo.
func ExampleNew() {
	cx := context.Background()
	server := demoserver.New(demoserver.Options{})
	serverTransport, clientTransport := mcp.NewInMemoryTransports()
	ss, err := server.Connect(cx, serverTransport, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer func() { _ = ss.Wait() }()

	client := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, nil)
	cs, err := client.Connect(cx, clientTransport, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer func() { _ = cs.Close() }()

	res, err := cs.CallTool(cx, &mcp.CallToolParams{
		Name:      "echo",
		Arguments: map[string]any{"text": "hello from the demo server"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	fmt.Println(cs.InitializeResult().ServerInfo.Name)
	// Output:
	// hello from the demo server
	// harness-demo
}

// ExampleHandler serves the demo server over Streamable HTTP and adds two
// numbers, reading the structured result.
func ExampleHandler() {
	cx := context.Background()
	ts := httptest.NewServer(demoserver.Handler(demoserver.Options{}))
	defer ts.Close()

	client := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, nil)
	cs, err := client.Connect(cx, &mcp.StreamableClientTransport{Endpoint: ts.URL}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer func() { _ = cs.Close() }()

	res, err := cs.CallTool(cx, &mcp.CallToolParams{
		Name:      "add",
		Arguments: map[string]any{"a": 2, "b": 40},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text, res.StructuredContent)
	// Output:
	// 42 map[sum:42]
}
