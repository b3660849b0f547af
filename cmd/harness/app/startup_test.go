package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cordisgo/harness/termui"
	"github.com/cordisgo/harness/testkit/mcptest"
	"github.com/cordisgo/harness/testkit/screentest"
)

// TestToolsListShowsSlowServers runs tools list on a terminal with a server that does not
// answer until the spinner has shown it: its line appears while the command waits and is
// gone once the server is connected; the tools are listed.
func TestToolsListShowsSlowServers(t *testing.T) {
	t.Parallel()
	upstream := mcptest.Handler(mcptest.NewServer("slow"))
	gate := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
		upstream.ServeHTTP(w, r)
	}))
	defer srv.Close()

	scr := screentest.New()
	var stdout strings.Builder
	a := testOptions().newInvocation(strings.NewReader(""), &stdout, scr, nil)
	a.term = termui.NewLines(scr) // stderr is a terminal
	cx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	code := make(chan int, 1)
	go func() { code <- a.run(cx, []string{"--http", "slow=" + srv.URL, "tools", "list"}) }()

	for !strings.Contains(scr.Shows(), "slow: connecting, ") {
		select {
		case <-scr.Changed:
		case <-cx.Done():
			t.Fatalf("no spinner line; stderr %q", scr.Written())
		}
	}
	close(gate)
	if got := <-code; got != ExitOK {
		t.Fatalf("exit %d; stderr %q", got, scr.Written())
	}
	if !strings.Contains(stdout.String(), "mcp__slow__echo") {
		t.Errorf("stdout lacks the slow server's tools:\n%s", stdout.String())
	}
	if got := scr.Shows(); strings.Contains(got, "slow:") {
		t.Errorf("the spinner's line is still on screen:\n%s", got)
	}
}
