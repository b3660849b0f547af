package mcpmanager_test

import (
	"context"
	"fmt"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpmanager"
)

// A plugin contributes an MCP server for its own lifetime: the server's tools appear while
// the plugin is loaded and are gone once its unload completes.
func ExampleManager_Register() {
	_ = ctx.Define(ctx.Meta{Name: "github-tools", Inject: []ctx.Dependency{mcpmanager.Key}},
		func(c *ctx.Context, _ struct{}) error {
			var cfg mcpclient.Config
			cfg.Default()
			cfg.Transport = mcpclient.TransportStreamableHTTP
			cfg.URL = "https://api.githubcopilot.com/mcp/"
			cfg.Headers = map[string]string{"Authorization": "Bearer ${secret:github}"}
			_, err := mcpmanager.Key.Use(c).Register(c, "github", cfg)
			return err
		})
}

// A management surface follows the server list; cancelling the context ends the stream.
func ExampleManager_Watch() {
	follow := func(ctx context.Context, m *mcpmanager.Manager) {
		for snap := range m.Watch(ctx) {
			if snap.Settings.Error != "" {
				fmt.Println("settings rejected:", snap.Settings.Error)
			}
			for _, v := range snap.Servers {
				fmt.Printf("%s (%s): %s %s\n", v.Name, v.Source, v.Status, v.Error)
			}
		}
	}
	_ = follow
}
