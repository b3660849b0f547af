//go:build faults

package faults

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/mcpclient"
)

// restartableHTTP is a Streamable HTTP MCP endpoint whose "process" can be restarted: a
// restart installs a new server behind a new handler, which knows none of the old
// sessions, exactly what a client sees when the server process restarts behind the same
// URL (404 for its session id).
type restartableHTTP struct {
	srv     *httptest.Server
	handler atomic.Pointer[mcp.StreamableHTTPHandler]
	mu      sync.Mutex
	servers []*mcp.Server
}

func newRestartableHTTP(t *testing.T) *restartableHTTP {
	r := &restartableHTTP{}
	r.restart()
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.handler.Load().ServeHTTP(w, req)
	}))
	t.Cleanup(func() {
		r.closeSessions(-1)
		r.srv.Close()
	})
	return r
}

// restart puts a new server behind a new handler.
func (r *restartableHTTP) restart() {
	s := newFaultServer()
	r.mu.Lock()
	r.servers = append(r.servers, s)
	r.mu.Unlock()
	r.handler.Store(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
}

// sessions returns how many sessions server i (-1: the current one) has.
func (r *restartableHTTP) sessions(i int) int {
	r.mu.Lock()
	if i < 0 {
		i = len(r.servers) - 1
	}
	s := r.servers[i]
	r.mu.Unlock()
	n := 0
	for range s.Sessions() {
		n++
	}
	return n
}

// closeSessions closes the sessions of server i (-1: every server): what the death of the
// old process does to them.
func (r *restartableHTTP) closeSessions(i int) {
	r.mu.Lock()
	servers := r.servers
	if i >= 0 {
		servers = servers[i : i+1]
	}
	r.mu.Unlock()
	for _, s := range servers {
		for ss := range s.Sessions() {
			_ = ss.Close()
		}
	}
}

// Scenario 4: an HTTP server restarted under an active session: the next request meets a
// 404 for the old session, the client reconnects, and calls work again.
func TestHTTPServerRestarted(t *testing.T) {
	f := newFixture(t)
	web := newRestartableHTTP(t)
	scope := f.mount(map[string]any{
		"serverName": "h",
		"transport":  "streamable-http",
		"url":        web.srv.URL,
		"reconnect":  map[string]any{"initialDelayMs": 10, "maxDelayMs": 50, "maxAttempts": 3},
	})
	f.st.waitPhase(t, "h", mcpclient.PhaseConnected)
	if got := f.mustCall("mcp__h__echo", `{"text":"before"}`); got != "before" {
		t.Fatalf("echo: %q", got)
	}
	connected := f.st.count("h", mcpclient.PhaseConnected)

	web.restart()
	// The first call after the restart reaches the new server with the old session id.
	_, err := f.call("mcp__h__echo", `{"text":"during"}`)
	if !errors.Is(err, mcpclient.ErrUnavailable) || !strings.Contains(err.Error(), `mcp server "h" lost the connection`) {
		t.Fatalf("first call after the restart: want a clear unavailable error, got %v", err)
	}
	t.Logf("first call after the restart: %v", err)
	web.closeSessions(0) // the old process is gone

	f.st.waitFor(t, "h", "connected again", func(all []mcpclient.Status) bool {
		return all[len(all)-1].Phase == mcpclient.PhaseConnected && f.st.count("h", mcpclient.PhaseConnected) > connected
	})
	if got := f.mustCall("mcp__h__echo", `{"text":"after"}`); got != "after" {
		t.Fatalf("echo after the restart: %q", got)
	}
	if n := web.sessions(-1); n != 1 {
		t.Errorf("the restarted server has %d sessions, want 1", n)
	}
	if err := scope.Dispose(ctxtest.Wait(t)); err != nil {
		t.Errorf("dispose: %v", err)
	}
}
