package gateway_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/demoserver"
	"github.com/cordisgo/harness/plugins/gateway"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// Prepare runs before the fleet's clients connect, so that they offer elicitation to their
// servers; the demo server's ask tool then asks the downstream client that called it.
func ExamplePrepare() {
	dh, closeSessions := demoserver.HandlerWithClose(demoserver.Options{})
	demo := httptest.NewServer(dh)
	defer func() { closeSessions(); demo.Close() }()
	root := ctx.New(ctx.Options{Logger: slog.New(slog.DiscardHandler)})
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	mount := func(def ctx.PluginDef, cfg any) error {
		s, err := root.Plugin(def, cfg)
		if err != nil {
			return err
		}
		return s.Wait(context.Background())
	}
	if err := mount(toolregistry.Plugin, nil); err != nil {
		fmt.Println(err)
		return
	}
	if err := gateway.Prepare(root); err != nil { // before the clients connect
		fmt.Println(err)
		return
	}
	var cfg mcpclient.Config
	cfg.Default()
	cfg.ServerName, cfg.Transport, cfg.URL = "demo", mcpclient.TransportStreamableHTTP, demo.URL+"/mcp"
	if err := mount(mcpclient.Plugin, cfg); err != nil {
		fmt.Println(err)
		return
	}
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

	c := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			fmt.Println("asked:", r.Params.Message)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "age": 36}}, nil
		},
	})
	// Server requests reach sessions initialized with the initialize handshake (2025-11-25).
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: front.URL + gateway.PathAggregated, HTTPClient: &http.Client{Transport: bearer{token}}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
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
