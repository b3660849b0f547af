// Package gatewaytest serves a scope tree through an MCP gateway on a local test server, as
// the gateway's tests and the suites that run other clients against it do. Only _test.go
// files may import this package (internal/archtest checks it).
package gatewaytest

import (
	"net/http/httptest"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/gateway"
)

// Serve makes a gateway over root with opts and serves its routes (handler options httpOpts)
// on an httptest server, and returns the gateway and the server's base URL. The gateway and
// the server close when the test ends. Call it from the test's goroutine.
func Serve(t testing.TB, root *ctx.Context, opts gateway.Options, httpOpts gateway.HTTPOptions) (*gateway.Gateway, string) {
	t.Helper()
	gw, err := gateway.New(root, opts)
	if err != nil {
		t.Fatal(err)
	}
	h, err := gw.Handler(httpOpts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { _ = gw.Close(); srv.Close() })
	return gw, srv.URL
}
