//go:build faults

package faults

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/testkit/mcptest"
)

// Scenario 4: an HTTP server restarted under an active session: the next request meets a
// 404 for the old session, the client reconnects, and calls work again.
func TestHTTPServerRestarted(t *testing.T) {
	f := newFixture(t)
	web := mcptest.NewHTTP(t, nil) // restartable: a new server behind the same URL
	scope := f.mount(map[string]any{
		"serverName": "h",
		"transport":  "streamable-http",
		"url":        web.URL(),
		"reconnect":  map[string]any{"initialDelayMs": 10, "maxDelayMs": 50, "maxAttempts": 3},
	})
	f.st.waitPhase(t, "h", mcpclient.PhaseConnected)
	if got := f.mustCall("mcp__h__echo", `{"text":"before"}`); got != "before" {
		t.Fatalf("echo: %q", got)
	}
	connected := f.st.count("h", mcpclient.PhaseConnected)

	web.Restart()
	// The first call after the restart reaches the new server with the old session id
	// ("lost the connection"), unless the client saw the old server's event stream end
	// first and had closed that connection already ("the connection was closed"): which
	// comes first is the machine's timing. Either way it is the unavailable error.
	_, err := f.call("mcp__h__echo", `{"text":"during"}`)
	if msg := fmt.Sprint(err); !errors.Is(err, mcpclient.ErrUnavailable) ||
		!strings.Contains(msg, `mcp server "h" lost the connection`) && !strings.Contains(msg, `mcp server "h": the connection was closed`) {
		t.Fatalf("first call after the restart: want a clear unavailable error, got %v", err)
	}
	t.Logf("first call after the restart: %v", err)
	web.CloseSessions(0) // the old process is gone

	f.st.waitFor(t, "h", "connected again", func(all []mcpclient.Status) bool {
		return all[len(all)-1].Phase == mcpclient.PhaseConnected && f.st.count("h", mcpclient.PhaseConnected) > connected
	})
	if got := f.mustCall("mcp__h__echo", `{"text":"after"}`); got != "after" {
		t.Fatalf("echo after the restart: %q", got)
	}
	if n := web.Sessions(-1); n != 1 {
		t.Errorf("the restarted server has %d sessions, want 1", n)
	}
	if err := scope.Dispose(ctxtest.Wait(t)); err != nil {
		t.Errorf("dispose: %v", err)
	}
}
