package mcpmanager_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/demoserver"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpmanager"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// exampleHost is a root with the tool registry and a manager without a settings file, and
// the demo MCP server over Streamable HTTP; stop undoes all of it.
func exampleHost() (root *ctx.Context, url string, stop func()) {
	h, closeSessions := demoserver.HandlerWithClose(demoserver.Options{})
	srv := httptest.NewServer(h)
	root = ctx.New(ctx.Options{Logger: slog.New(slog.DiscardHandler)})
	tools, _ := root.Plugin(toolregistry.Plugin, nil)
	_ = tools.Wait(context.Background())
	manager, _ := root.Plugin(mcpmanager.Plugin, mcpmanager.Config{DebounceMs: mcpmanager.DefaultDebounceMs})
	_ = manager.Wait(context.Background())
	return root, srv.URL + "/mcp", func() {
		_ = root.Scope().Dispose(context.Background())
		closeSessions()
		srv.Close()
	}
}

// A plugin contributes an MCP server for its own lifetime: the server's tools appear while
// the plugin is loaded and are gone once its unload completes.
func ExampleManager_Register() {
	root, url, stop := exampleHost()
	defer stop()

	demo := ctx.Define(ctx.Meta{Name: "demo-tools", Inject: []ctx.Dependency{mcpmanager.Key}},
		func(c *ctx.Context, _ struct{}) error {
			var cfg mcpclient.Config
			cfg.Default()
			cfg.Transport = mcpclient.TransportStreamableHTTP
			cfg.URL = url
			_, err := mcpmanager.Key.Use(c).Register(c, "demo", cfg)
			return err
		})
	plugin, _ := root.Plugin(demo, nil)
	_ = plugin.Wait(context.Background())

	m, _ := mcpmanager.Key.Get(root)
	cx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for snap := range m.Watch(cx) { // until the registered server is connected
		if len(snap.Servers) == 1 && snap.Servers[0].Status == mcpmanager.StateConnected {
			v := snap.Servers[0]
			fmt.Println(v.Name, v.Source, v.Status)
			break
		}
	}
	_ = plugin.Dispose(context.Background())
	fmt.Println(len(m.List()), "servers after the plugin's unload")
	// Output:
	// demo registered connected
	// 0 servers after the plugin's unload
}

// A management surface follows the server list: the current list at once, then the whole
// list after every change; cancelling the context ends the stream.
func ExampleManager_Watch() {
	root, url, stop := exampleHost()
	defer stop()
	m, _ := mcpmanager.Key.Get(root)

	var cfg mcpclient.Config
	cfg.Default()
	cfg.Transport = mcpclient.TransportStreamableHTTP
	cfg.URL = url
	dispose, _ := m.Register(root, "demo", cfg)
	defer func() { _ = dispose(context.Background()) }()

	cx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	seen := map[mcpmanager.State]bool{}
	for snap := range m.Watch(cx) {
		for _, v := range snap.Servers {
			if !seen[v.Status] {
				seen[v.Status] = true
				if v.Status == mcpmanager.StateConnected {
					fmt.Printf("%s (%s): %s, %d tools\n", v.Name, v.Source, v.Status, len(v.Tools))
					cancel()
				}
			}
		}
	}
	// Output:
	// demo (registered): connected, 8 tools
}
