package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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

// drainFleet is demoFleet with a short quiet period: the tests wait for it once per drain.
func drainFleet(t *testing.T) *fleet {
	t.Helper()
	root := newTree(t)
	mountHTTP(t, root, "demo", demoUpstream(t))
	return serveGateway(t, root, gateway.Options{DrainQuiet: 20 * time.Millisecond})
}

// drain begins f's drain, checks that the health check fails at once ("draining"), and
// sends what Drain returns.
func drain(t *testing.T, f *fleet) <-chan error {
	t.Helper()
	drained := make(chan error, 1)
	go func() { drained <- f.gw.Drain(t.Context()) }()
	if code, body := health(t, f.url); code != http.StatusServiceUnavailable || body != "draining" {
		t.Fatalf("health while draining: %d %q", code, body)
	}
	return drained
}

// slowCall calls the demo's slow tool for ms milliseconds on cs, and sends its outcome.
func slowCall(cs *mcp.ClientSession, ms int) <-chan error {
	out := make(chan error, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__demo__slow", Arguments: map[string]any{"ms": ms}})
		if err == nil && res.IsError {
			err = fmt.Errorf("the call failed: %v", res.Content)
		}
		out <- err
	}()
	return out
}

// A draining gateway fails its health check at once, serves the requests in flight to their
// end, and Drain returns only once the balancer has seen the check fail and they are done.
func TestDrain(t *testing.T) {
	f := drainFleet(t)
	if code, body := health(t, f.url); code != http.StatusOK || body != "ok" {
		t.Fatalf("health before the drain: %d %q", code, body)
	}
	cs := connect(t, f.url+"/mcp", nil)
	slow := slowCall(cs, 300)
	waitInFlight(t, f, 1)
	drained := drain(t, f)
	if err := <-slow; err != nil {
		t.Fatalf("the call in flight failed: %v", err)
	}
	if err := <-drained; err != nil {
		t.Fatal(err)
	}
}

// A request that reaches a draining gateway before the balancer has seen the health check
// fail is served too: Drain waits for it, so that closing the gateway once Drain returns
// fails no call. Once drained, the gateway refuses a request with 503 and a Retry-After,
// which a balancer retries on another replica. (The rolling restart's lost calls: the
// drain ended as the check failed, with the calls that came since it began in flight.)
func TestDrainServesUntilTheBalancerStops(t *testing.T) {
	f := drainFleet(t)
	cs := connect(t, f.url+"/mcp", nil)
	gateway.BeginDrain(f.gw) // nothing in flight: the balancer has not looked yet
	slow := slowCall(cs, 300)
	waitInFlight(t, f, 1)
	drained := drain(t, f)
	if err := <-drained; err != nil {
		t.Fatal(err)
	}
	// What a stopping replica does next (hostgateway.Serve, once it stops accepting connections): it
	// ends the requests still in flight, of which there must be none.
	if err := f.gw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-slow; err != nil {
		t.Fatalf("the call that came while draining failed: %v", err)
	}

	// A request that still comes is told to go elsewhere.
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, f.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := (&http.Client{Transport: bearer{token}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "send the request again") {
		t.Fatalf("a request once drained: %d, Retry-After %q: %s", res.StatusCode, res.Header.Get("Retry-After"), b)
	}
	if code, _ := health(t, f.url); code != http.StatusServiceUnavailable {
		t.Fatalf("health once drained: %d", code)
	}
}

// A drain that runs out (harness serve's --drain-timeout) leaves a call in flight, which the
// close that follows ends: the call is answered with a JSON-RPC error that says to retry,
// not cut without an answer.
func TestDrainTimeoutAnswersCallsInFlight(t *testing.T) {
	f := drainFleet(t)
	cs := connect(t, f.url+"/mcp", nil)
	slow := slowCall(cs, 60_000)
	waitInFlight(t, f, 1)
	dcx, cancel := context.WithCancel(t.Context())
	cancel() // the drain's time is up
	if err := f.gw.Drain(dcx); !errors.Is(err, context.Canceled) {
		t.Fatalf("a drain out of time: %v", err)
	}
	if err := f.gw.Close(); err != nil {
		t.Fatal(err)
	}
	var je *jsonrpc.Error
	if err := <-slow; !errors.As(err, &je) || je.Code != jsonrpc.CodeInternalError || !strings.Contains(je.Message, "stopped before it answered") || !strings.Contains(je.Message, "retry it") {
		t.Fatalf("the call in flight at the close: %v, want a JSON-RPC error %d that says to retry", err, jsonrpc.CodeInternalError)
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
