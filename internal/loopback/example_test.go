package loopback_test

import (
	"fmt"
	"net/http/httptest"

	"github.com/cordisgo/harness/internal/loopback"
)

// A server checks every request at its front door: the Host and Origin headers, then the
// bearer token.
func Example() {
	g := loopback.New(loopback.Options{Addr: "127.0.0.1:7100", Token: "s3cret"})
	for _, r := range []struct{ host, origin, auth string }{
		{"127.0.0.1:7100", "", "Bearer s3cret"},
		{"localhost:7100", "http://localhost:3000", "bearer s3cret"},
		{"rebound.example:7100", "", "Bearer s3cret"}, // a name that resolves to 127.0.0.1
		{"127.0.0.1:7100", "https://evil.example", "Bearer s3cret"},
		{"127.0.0.1:7100", "", "Bearer guess"},
	} {
		req := httptest.NewRequest("POST", "/", nil)
		req.Host = r.host
		if r.origin != "" {
			req.Header.Set("Origin", r.origin)
		}
		req.Header.Set("Authorization", r.auth)
		err := g.Check(req)
		if err == nil && !g.Authorized(req) {
			err = loopback.ErrToken
		}
		fmt.Println(loopback.Status(err), err)
	}
	// Output:
	// 200 <nil>
	// 200 <nil>
	// 403 loopback: Host header not allowed
	// 403 loopback: Origin not allowed
	// 401 loopback: missing or wrong bearer token
}
