package examples_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpresources"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// watchResource is the "Watching a resource" example of docs/plugins.md.
func watchResource(c *ctx.Context) error {
	resources, ok := mcpresources.Key.Get(c)
	if !ok {
		return errors.New("no mcpResources service")
	}
	sub, err := resources.Subscribe(c, c, "docs", "docs://guide")
	if err != nil {
		return err // errors.Is(err, mcpresources.ErrNoSubscribe): the server cannot
	}
	if _, err := c.Defer("watch:docs-guide", func(context.Context) error { return sub.Close() }); err != nil {
		return err
	}
	_, err = mcpclient.ResourceUpdatedEvent.On(c, func(u mcpclient.ResourceChange) error {
		if u.Server == "docs" && u.URI == "docs://guide" {
			fmt.Println("guide changed") // read it elsewhere: listeners must return quickly
		}
		return nil
	})
	return err
}

// guideServer serves docs://guide and reports each subscription change it receives.
func guideServer(changes chan<- string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, &mcp.ServerOptions{
		SubscribeHandler: func(_ context.Context, r *mcp.SubscribeRequest) error {
			changes <- "subscribed " + r.Params.URI
			return nil
		},
		UnsubscribeHandler: func(_ context.Context, r *mcp.UnsubscribeRequest) error {
			changes <- "unsubscribed " + r.Params.URI
			return nil
		},
	})
	srv.AddResource(&mcp.Resource{URI: "docs://guide", Name: "guide"}, func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, Text: "# Guide"}}}, nil
	})
	return srv
}

// A plugin subscribes to a resource for as long as it is loaded, and hears its updates.
func Example_watchResource() {
	changes := make(chan string, 4)
	guide := guideServer(changes)
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return guide }, nil))
	defer srv.Close()

	root := newRoot()
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	_, _ = root.Plugin(toolregistry.Plugin, nil)
	_, _ = root.Plugin(mcpresources.Plugin, nil)
	var cfg mcpclient.Config
	cfg.Default()
	cfg.ServerName, cfg.Transport, cfg.URL = "docs", mcpclient.TransportStreamableHTTP, srv.URL
	cfg.ProtocolVersion = "2025-11-25"
	client, _ := root.Plugin(mcpclient.Plugin, cfg)
	_ = client.Wait(context.Background())
	_ = root.Settle(context.Background())

	heard := make(chan struct{})
	watcher, err := root.Plugin(plugin("watcher", func(c *ctx.Context) error {
		if err := watchResource(c); err != nil {
			return err
		}
		_, err := mcpclient.ResourceUpdatedEvent.On(c, func(mcpclient.ResourceChange) error { close(heard); return nil })
		return err
	}), nil)
	if err == nil {
		err = watcher.Wait(context.Background())
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(<-changes)
	_ = guide.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: "docs://guide"})
	<-heard
	_ = watcher.Dispose(context.Background()) // the plugin unloads: its subscription goes
	fmt.Println(<-changes)
	// Output:
	// subscribed docs://guide
	// guide changed
	// unsubscribed docs://guide
}
