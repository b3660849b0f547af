package mcpclient_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/demoserver"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// One client per MCP server, mounted where its tools should be visible: the server's tools
// become registry tools named mcp__<server>__<tool>, and StatusEvent follows the connection.
func Example() {
	h, closeSessions := demoserver.HandlerWithClose(demoserver.Options{})
	srv := httptest.NewServer(h)
	defer func() { closeSessions(); srv.Close() }()

	root := ctx.New(ctx.Options{Logger: slog.New(slog.DiscardHandler)})
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	_, _ = mcpclient.StatusEvent.On(root, func(st mcpclient.Status) error {
		if st.Phase == mcpclient.PhaseConnected {
			fmt.Printf("%s: connected over %s, %d tools\n", st.Server, st.Transport, len(st.Tools))
		}
		return nil
	})
	tools, _ := root.Plugin(toolregistry.Plugin, nil)
	_ = tools.Wait(context.Background())

	var cfg mcpclient.Config
	cfg.Default()
	cfg.ServerName = "demo"
	cfg.Transport = mcpclient.TransportStreamableHTTP
	cfg.URL = srv.URL + "/mcp"
	client, _ := root.Plugin(mcpclient.Plugin, cfg)
	_ = client.Wait(context.Background()) // activation waits for the first discovery

	reg, _ := toolregistry.Key.Get(root)
	res, err := reg.Execute(root, root, "mcp__demo__echo", []byte(`{"text":"hello"}`), toolregistry.ExecOptions{})
	fmt.Println(res.Text(), err)
	// Output:
	// demo: connected over streamable-http, 8 tools
	// hello <nil>
}

// Server names are 1 to 32 letters, digits, '-' or '_'.
func ExampleValidServerName() {
	fmt.Println(mcpclient.ValidServerName("github"), mcpclient.ValidServerName("my server"))
	// Output: true false
}
