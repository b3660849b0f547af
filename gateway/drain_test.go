package gateway_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/gateway"
)

func health(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, strings.TrimSpace(string(b))
}

// A draining gateway fails its health check at once, serves the requests in flight to their
// end, and Drain returns only once the balancer has seen the check fail and they are done.
func TestDrain(t *testing.T) {
	f := demoFleet(t)
	if code, body := health(t, f.url); code != http.StatusOK || body != "ok" {
		t.Fatalf("health before the drain: %d %q", code, body)
	}
	cs := connect(t, f.url+"/mcp", nil)
	slow := make(chan error, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__demo__slow", Arguments: map[string]any{"ms": 300}})
		if err == nil && res.IsError {
			err = io.ErrUnexpectedEOF
		}
		slow <- err
	}()
	waitInFlight(t, f, 1)

	drained := make(chan error, 1)
	go func() { drained <- f.gw.Drain(t.Context()) }()
	if code, body := health(t, f.url); code != http.StatusServiceUnavailable || body != "draining" {
		t.Fatalf("health while draining: %d %q", code, body)
	}
	if err := <-slow; err != nil {
		t.Fatalf("the call in flight failed: %v", err)
	}
	if err := <-drained; err != nil {
		t.Fatal(err)
	}
}

// waitInFlight waits until the gateway's sessions have n requests in flight, woken by each
// SessionsEvent.
func waitInFlight(t *testing.T, f *fleet, n int) {
	t.Helper()
	wake := make(chan struct{}, 1)
	stop, err := gateway.SessionsEvent.On(f.root, func(gateway.SessionsSnapshot) error {
		select {
		case wake <- struct{}{}:
		default:
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stop(context.Background()) }()
	for {
		got := 0
		for _, s := range f.gw.Sessions().Sessions {
			got += len(s.InFlight)
		}
		if got >= n {
			return
		}
		select {
		case <-wake:
		case <-t.Context().Done():
			t.Fatalf("%d requests in flight, want %d", got, n)
		}
	}
}
