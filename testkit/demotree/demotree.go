// Package demotree starts, for examples, a scope tree with the tool registry and one MCP
// client connected to the embedded demo server over Streamable HTTP (an httptest server):
// the setup of the examples that show what is built on connected clients (the gateway,
// mcpclient.Upstreams). An example that shows how a client is mounted writes it out
// instead. Only _test.go files may import this package (internal/archtest checks it).
package demotree

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

// Tree is a running tree and its demo server. Root may be used concurrently, as any
// context; Close must be called once, when the example is done.
type Tree struct {
	// Root is the root scope, logs discarded; the tool registry and the client are mounted
	// on it.
	Root *ctx.Context
	// URL is the demo server's endpoint.
	URL string

	close func()
}

// Options shape a tree (the zero value is Start's).
type Options struct {
	// BeforeClient, if set, runs on the root after the tool registry is mounted and before
	// the client is: what the client should see when it connects (gateway.Offer).
	BeforeClient func(root *ctx.Context) error
}

// Start serves the demo server, mounts the tool registry and a client of it called server
// on a new root, and returns once the client has connected and registered its tools.
func Start(server string) (*Tree, error) { return StartWith(server, Options{}) }

// StartWith is Start with options.
func StartWith(server string, opts Options) (*Tree, error) {
	h, closeSessions := demoserver.HandlerWithClose(demoserver.Options{})
	srv := httptest.NewServer(h)
	root := ctx.New(ctx.Options{Logger: slog.New(slog.DiscardHandler)})
	t := &Tree{Root: root, URL: srv.URL + "/mcp", close: func() {
		_ = root.Scope().Dispose(context.Background())
		closeSessions()
		srv.Close()
	}}
	var cfg mcpclient.Config
	cfg.Default()
	cfg.ServerName, cfg.Transport, cfg.URL = server, mcpclient.TransportStreamableHTTP, t.URL
	for _, p := range []struct {
		def ctx.PluginDef
		cfg any
	}{{toolregistry.Plugin, nil}, {mcpclient.Plugin, cfg}} {
		if p.def == mcpclient.Plugin && opts.BeforeClient != nil {
			if err := opts.BeforeClient(root); err != nil {
				t.Close()
				return nil, fmt.Errorf("demotree: before the client: %w", err)
			}
		}
		s, err := root.Plugin(p.def, p.cfg)
		if err == nil {
			err = s.Wait(context.Background())
		}
		if err != nil {
			t.Close()
			return nil, fmt.Errorf("demotree: mounting %s: %w", p.def.Name(), err)
		}
	}
	return t, nil
}

// Close disposes the tree and stops the demo server.
func (t *Tree) Close() { t.close() }
