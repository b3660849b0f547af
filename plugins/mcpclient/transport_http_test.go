package mcpclient

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/testkit/mcptest"
)

// seenRequest is what recordRequests keeps of one request.
type seenRequest struct {
	method, apiKey, auth, accept string
}

// requestLog records every request a test HTTP server receives.
type requestLog struct {
	mu   sync.Mutex
	reqs []seenRequest
}

func (l *requestLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.reqs = append(l.reqs, seenRequest{r.Method, r.Header.Get("X-Api-Key"), r.Header.Get("Authorization"), r.Header.Get("Accept")})
		l.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (l *requestLog) all() []seenRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]seenRequest(nil), l.reqs...)
}

func (l *requestLog) count(method string) int {
	n := 0
	for _, r := range l.all() {
		if r.method == method {
			n++
		}
	}
	return n
}

func httpConfig(url string) Config {
	var c Config
	c.Default()
	c.ServerName, c.Transport, c.URL = "web", TransportStreamableHTTP, url
	c.Headers = map[string]string{"X-Api-Key": "k-123", "Authorization": "Bearer tok"}
	return c
}

// startHTTP serves h on a test server closed at the end of the test.
func startHTTP(t *testing.T, h http.Handler) (*httptest.Server, *requestLog) {
	t.Helper()
	var log requestLog
	srv := httptest.NewServer(log.wrap(h))
	t.Cleanup(srv.Close)
	return srv, &log
}

// checkHeaders fails unless every request carried the configured headers
// and (for Streamable HTTP) the SDK's own Accept header survived.
func checkHeaders(t *testing.T, log *requestLog, streamable bool) {
	t.Helper()
	for _, r := range log.all() {
		if r.apiKey != "k-123" || r.auth != "Bearer tok" {
			t.Errorf("%s without the configured headers: %+v", r.method, r)
		}
		if streamable && r.method == http.MethodPost && !strings.Contains(r.accept, "text/event-stream") {
			t.Errorf("POST Accept header overridden: %q", r.accept)
		}
	}
}

func TestStreamableHTTP(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		opts         *mcp.StreamableHTTPOptions
		wantProtocol string
	}{
		{"stateful", nil, "2025-11-25"},
		{"stateless", &mcp.StreamableHTTPOptions{Stateless: true}, "2026-07-28"},
		{"json responses", &mcp.StreamableHTTPOptions{JSONResponse: true}, "2025-11-25"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			server := mcptest.NewServer("")
			srv, log := startHTTP(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, tt.opts))
			cfg := httpConfig(srv.URL)
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			cx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			conn, err := dial(cx, cfg, dialOptions{})
			cancel() // the session must outlive its connect ctx
			if err != nil {
				t.Fatal(err)
			}
			if conn.Transport() != TransportStreamableHTTP {
				t.Errorf("transport %q", conn.Transport())
			}
			if got := conn.Info().ProtocolVersion; got != tt.wantProtocol {
				t.Errorf("protocol %q, want %q", got, tt.wantProtocol)
			}
			if got := callText(t, conn.Session(), "echo", map[string]any{"text": "over http"}); got != "over http" {
				t.Errorf("echo = %q", got)
			}
			if conn.StderrTail() != "" || conn.ProcessGroup() != 0 {
				t.Error("HTTP connection reports a process")
			}
			closeConn(t, conn)
			checkHeaders(t, log, true)
			if log.count(http.MethodPost) < 2 {
				t.Errorf("requests: %+v", log.all())
			}
			if tt.opts == nil && log.count(http.MethodDelete) != 1 {
				t.Errorf("stateful close sent %d DELETEs", log.count(http.MethodDelete))
			}
		})
	}
}

// rejectPOST answers POSTs that carry no SSE session id with status, like
// servers that predate Streamable HTTP, and passes the rest to h.
func rejectPOST(status int, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Query().Get("sessionid") == "" {
			http.Error(w, http.StatusText(status), status)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// TestLegacySSEFallback: a server that only speaks the 2024-11-05
// HTTP+SSE transport is reached through the fallback, with headers (c).
func TestLegacySSEFallback(t *testing.T) {
	t.Parallel()
	sse := func() http.Handler {
		server := mcptest.NewServer("")
		return mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return server }, nil)
	}
	tests := []struct {
		name    string
		handler http.Handler
	}{
		{"plain SSE handler (400)", sse()},
		{"404 on POST", rejectPOST(http.StatusNotFound, sse())},
		{"405 on POST", rejectPOST(http.StatusMethodNotAllowed, sse())},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, log := startHTTP(t, tt.handler)
			cx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			conn, err := dial(cx, httpConfig(srv.URL), dialOptions{})
			cancel() // the SSE stream must outlive the connect ctx
			if err != nil {
				t.Fatal(err)
			}
			if conn.Transport() != TransportLegacySSE {
				t.Errorf("transport %q, want %q", conn.Transport(), TransportLegacySSE)
			}
			if got := callText(t, conn.Session(), "add", map[string]any{"a": 20, "b": 22}); got != "42" {
				t.Errorf("add = %q", got)
			}
			closeConn(t, conn)
			checkHeaders(t, log, false)
			if log.count(http.MethodGet) == 0 {
				t.Error("no SSE GET stream was opened")
			}
		})
	}
}

// TestNoFallbackWhenNotRejected: auth failures, transient statuses and
// unreachable servers are reported, not retried as SSE.
func TestNoFallbackWhenNotRejected(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status  int
		wantMsg string
	}{
		{http.StatusUnauthorized, "Unauthorized"},
		{http.StatusForbidden, "Forbidden"},
		{http.StatusTooManyRequests, "Too Many Requests"},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			srv, log := startHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, http.StatusText(tt.status), tt.status)
			}))
			_, err := dialTestHTTP(t, httpConfig(srv.URL))
			if err == nil || !strings.Contains(err.Error(), tt.wantMsg) || !strings.HasPrefix(err.Error(), `mcp server "web": connect: `) {
				t.Fatalf("err = %v", err)
			}
			if n := log.count(http.MethodGet); n != 0 {
				t.Errorf("fell back to SSE (%d GETs)", n)
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		if _, err := dialTestHTTP(t, httpConfig(url)); err == nil || !strings.Contains(err.Error(), "connect") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("both transports rejected", func(t *testing.T) {
		srv, _ := startHTTP(t, http.NotFoundHandler())
		_, err := dialTestHTTP(t, httpConfig(srv.URL))
		if err == nil || !strings.Contains(err.Error(), "streamable HTTP: ") || !strings.Contains(err.Error(), "legacy SSE: ") {
			t.Fatalf("err = %v", err)
		}
	})
}

func dialTestHTTP(t *testing.T, cfg Config) (*connection, error) {
	t.Helper()
	cx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := dial(cx, cfg, dialOptions{})
	if err == nil {
		closeConn(t, conn)
		return nil, errors.New("unexpectedly connected")
	}
	return conn, err
}
