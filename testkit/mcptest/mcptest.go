// Package mcptest holds test-only helpers for packages that run MCP servers: one test
// server ([NewServer], [NewControlled]: tools echo, whoami, add, getenv, big, block, stats,
// storm; instructions), served three ways — over stdio by re-executing the test binary
// ([Main], [Stdio]) in one of the misbehaviours a client must survive ([Mode]), in memory
// ([InMemory]), and over Streamable HTTP behind an httptest endpoint that can be restarted
// ([NewHTTP]) — a server with subscribable resources that reports its subscriptions
// ([Subscribable]), a tool that lists the calling client's roots ([AddRootsTool]), the
// collector of what stdio test servers report ([Events]), and the comparison of two JSON
// texts ([SameJSON]). Status
// recording is [ctxtest.Record]'s job.
//
// Only tests may import this package (internal/archtest checks it).
//
// [ctxtest.Record]: https://pkg.go.dev/github.com/cordisgo/harness/ctx/ctxtest#Record
package mcptest

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Handler serves srv over Streamable HTTP, for tests that wrap it.
func Handler(srv *mcp.Server) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
}

// HTTP is a Streamable HTTP endpoint (an httptest server) whose server can be restarted:
// [HTTP.Restart] puts a new server behind a new handler that knows none of the old
// sessions, which is what a client sees when the server process restarts behind the same
// URL (404 for its session id). It is closed, its sessions first, when the test ends.
//
// An HTTP is safe for concurrent use.
type HTTP struct {
	srv     *httptest.Server
	newSrv  func() *mcp.Server
	handler atomic.Pointer[http.Handler]
	mu      sync.Mutex
	servers []*mcp.Server
}

// NewHTTP starts an endpoint serving newServer's servers (one per start). Nil serves
// [NewServer]("http").
func NewHTTP(t testing.TB, newServer func() *mcp.Server) *HTTP {
	if newServer == nil {
		newServer = func() *mcp.Server { return NewServer("http") }
	}
	h := &HTTP{newSrv: newServer}
	h.Restart()
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*h.handler.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		h.CloseSessions(-1)
		h.srv.CloseClientConnections() // a client that went away without ending its session
		h.srv.Close()
	})
	return h
}

// URL is the endpoint's address.
func (h *HTTP) URL() string { return h.srv.URL }

// Restart puts a new server behind a new handler.
func (h *HTTP) Restart() {
	s := h.newSrv()
	h.mu.Lock()
	h.servers = append(h.servers, s)
	h.mu.Unlock()
	handler := Handler(s)
	h.handler.Store(&handler)
}

// server returns server i, or the current one when i < 0.
func (h *HTTP) server(i int) *mcp.Server {
	h.mu.Lock()
	defer h.mu.Unlock()
	if i < 0 {
		i = len(h.servers) - 1
	}
	return h.servers[i]
}

// Sessions returns how many sessions server i (-1: the current one) has.
func (h *HTTP) Sessions(i int) int {
	n := 0
	for range h.server(i).Sessions() {
		n++
	}
	return n
}

// CloseSessions closes the sessions of server i (-1: every server): what the death of
// the old process does to them.
func (h *HTTP) CloseSessions(i int) {
	h.mu.Lock()
	servers := h.servers
	if i >= 0 {
		servers = servers[i : i+1]
	}
	h.mu.Unlock()
	for _, s := range servers {
		for ss := range s.Sessions() {
			_ = ss.Close()
		}
	}
}
