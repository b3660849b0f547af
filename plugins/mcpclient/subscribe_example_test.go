package mcpclient_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/testkit/mcptest"
)

// Two subscribers of one URI share one subscription on the wire; updates are events of the
// tree; the last Close unsubscribes.
func ExampleUpstream_Subscribe() {
	server := mcptest.NewSubscribable(true) // reports the subscriptions it receives
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server.Server }, nil))
	defer srv.Close()
	root := ctx.New(ctx.Options{Logger: slog.New(slog.DiscardHandler)})
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	tools, _ := root.Plugin(toolregistry.Plugin, nil)
	_ = tools.Wait(context.Background())
	var cfg mcpclient.Config
	cfg.Default()
	cfg.ServerName, cfg.Transport, cfg.URL = "feed", mcpclient.TransportStreamableHTTP, srv.URL
	client, _ := root.Plugin(mcpclient.Plugin, cfg)
	_ = client.Wait(context.Background())

	updated := make(chan mcpclient.ResourceChange, 1)
	_, _ = mcpclient.ResourceUpdatedEvent.On(root, func(u mcpclient.ResourceChange) error { updated <- u; return nil })

	u, ok := mcpclient.LookupUpstream(root, "feed")
	if !ok {
		fmt.Println("no client feed")
		return
	}
	first, err := u.Subscribe(context.Background(), "sub://a")
	if err != nil {
		fmt.Println(err)
		return
	}
	second, _ := u.Subscribe(context.Background(), "sub://a")
	fmt.Println("server saw a subscription of", <-server.Subscribed)
	subscribes, _ := server.Counts()
	fmt.Println("subscriptions on the wire:", subscribes)

	_ = server.Server.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: "sub://a"})
	ev := <-updated
	fmt.Println("updated:", ev.Server, ev.URI)

	_ = first.Close()
	_ = second.Close()
	fmt.Println("server saw an unsubscription of", <-server.Unsubscribed)
	// Output:
	// server saw a subscription of sub://a
	// subscriptions on the wire: 1
	// updated: feed sub://a
	// server saw an unsubscription of sub://a
}
