package mcpclient_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/demoserver"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// A gateway finds the clients visible from its scope and uses their live sessions for
// requests other than tool calls (which go through the tool registry).
func ExampleUpstreams() {
	h, closeSessions := demoserver.HandlerWithClose(demoserver.Options{})
	srv := httptest.NewServer(h)
	defer func() { closeSessions(); srv.Close() }()
	root := ctx.New(ctx.Options{Logger: slog.New(slog.DiscardHandler)})
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	tools, _ := root.Plugin(toolregistry.Plugin, nil)
	_ = tools.Wait(context.Background())
	var cfg mcpclient.Config
	cfg.Default()
	cfg.ServerName, cfg.Transport, cfg.URL = "demo", mcpclient.TransportStreamableHTTP, srv.URL+"/mcp"
	client, _ := root.Plugin(mcpclient.Plugin, cfg)
	_ = client.Wait(context.Background())

	for _, u := range mcpclient.Upstreams(root) {
		res, err := u.Session().ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "demo://config.json"})
		fmt.Println(u.Server(), err == nil && len(res.Contents) == 1)
	}
	// Output: demo true
}
