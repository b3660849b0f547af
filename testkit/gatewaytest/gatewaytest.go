// Package gatewaytest serves a scope tree through an MCP gateway on a local test server, as
// the gateway's tests and the suites that run other clients against it do. Only _test.go
// files may import this package (internal/archtest checks it).
package gatewaytest

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// TreeOptions configures [Tree].
type TreeOptions struct {
	// Logger receives the tree's logs (nil: nowhere).
	Logger slog.Handler
	// Offer makes the gateway's offers ([gateway.Offer]) before anything else mounts, as
	// harness serve does: the MCP clients mounted later declare elicitation and sampling
	// from their first connection, and none reconnects when the gateway is made.
	Offer bool
}

// Tree returns a root for a gateway's fleet: the tool registry mounted and, with
// opts.Offer, the gateway's offers made. It is disposed when the test ends.
func Tree(t testing.TB, opts TreeOptions) *ctx.Context {
	t.Helper()
	h := opts.Logger
	if h == nil {
		h = slog.DiscardHandler
	}
	root := ctx.New(ctx.Options{Logger: slog.New(h)})
	t.Cleanup(func() { _ = root.Scope().Dispose(context.Background()) })
	ctxtest.MountActive(t, root, toolregistry.Plugin, nil)
	if opts.Offer {
		if err := gateway.Offer(root); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// Serve makes a gateway over root with opts and serves its routes (handler options httpOpts)
// on a local port, and returns the gateway and the server's base URL. The gateway and the
// server close when the test ends. Call it from the test's goroutine.
func Serve(t testing.TB, root *ctx.Context, opts gateway.Options, httpOpts gateway.HTTPOptions) (*gateway.Gateway, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ServeOn(t, ln, root, opts, httpOpts), "http://" + ln.Addr().String()
}

// ServeOn is Serve on ln (whose address the test needed before: an OAuth resource's URL).
func ServeOn(t testing.TB, ln net.Listener, root *ctx.Context, opts gateway.Options, httpOpts gateway.HTTPOptions) *gateway.Gateway {
	t.Helper()
	gw, err := gateway.New(root, opts)
	if err != nil {
		t.Fatal(err)
	}
	h, err := gw.Handler(httpOpts)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = gw.Close(); _ = srv.Close() })
	return gw
}
