package gateway_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/testkit/mcptest"
)

// hangServer is an upstream whose tool hang answers only when its request is cancelled:
// started receives a value when a call begins, cancelled when its context ends.
func hangServer(t *testing.T) (url string, started, cancelled chan struct{}) {
	t.Helper()
	started, cancelled = make(chan struct{}, 16), make(chan struct{}, 16)
	h := mcptest.NewHTTP(t, func() *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
		mcp.AddTool(s, &mcp.Tool{Name: "hang"}, func(cx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			started <- struct{}{}
			<-cx.Done()
			cancelled <- struct{}{}
			return nil, nil, cx.Err()
		})
		return s
	})
	return h.URL(), started, cancelled
}

// TestDeleteCancelsCalls: a downstream session ended with DELETE while a call is in flight
// is answered at once, and the call is cancelled upstream.
func TestDeleteCancelsCalls(t *testing.T) {
	url, started, cancelled := hangServer(t)
	root := newTree(t)
	mountHTTP(t, root, "up", url)
	f := serveGateway(t, root, gateway.Options{})
	cs := connect(t, f.url+"/mcp", nil)
	go func() { _, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__up__hang"}) }()
	within(t, "the call reaching the server", started)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodDelete, f.url+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", cs.ID())
	deleted := make(chan struct{})
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			t.Logf("DELETE: %d", resp.StatusCode)
		}
		close(deleted)
	}()
	within(t, "DELETE answered", deleted)
	within(t, "the call cancelled upstream", cancelled)
}

// killable is an HTTP client transport whose connections can all be cut at once, as when
// the client's process is killed.
type killable struct {
	mu    sync.Mutex
	conns []net.Conn
	rt    *http.Transport
}

func newKillable() *killable {
	k := &killable{}
	k.rt = &http.Transport{DialContext: func(cx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(cx, network, addr)
		if err == nil {
			k.mu.Lock()
			k.conns = append(k.conns, c)
			k.mu.Unlock()
		}
		return c, err
	}}
	return k
}

func (k *killable) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+token)
	return k.rt.RoundTrip(r)
}

func (k *killable) kill() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, c := range k.conns {
		_ = c.Close()
	}
}

// TestKilledClientCancelsCalls: a downstream client whose connections end mid-call (its
// process was killed) has the call cancelled upstream at once, on both route kinds.
func TestKilledClientCancelsCalls(t *testing.T) {
	url, started, cancelled := hangServer(t)
	root := newTree(t)
	mountHTTP(t, root, "up", url)
	f := serveGateway(t, root, gateway.Options{})
	for _, rt := range []struct{ path, tool string }{{"/mcp", "mcp__up__hang"}, {"/mcp/servers/up", "hang"}} {
		k := newKillable()
		c := mcp.NewClient(&mcp.Implementation{Name: "doomed", Version: "1"}, nil)
		cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: f.url + rt.path, HTTPClient: &http.Client{Transport: k}, DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		returned := make(chan struct{})
		go func() {
			defer close(returned)
			_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: rt.tool})
		}()
		within(t, rt.path+": the call reaching the server", started)
		k.kill()
		within(t, rt.path+": the call cancelled upstream", cancelled)
		within(t, rt.path+": the killed client's call returning", returned)
		_ = cs.Close()
		k.rt.CloseIdleConnections()
	}
}

// abandoning is an HTTP client transport of a client that goes away without a word: its
// DELETE never reaches the gateway, and it holds no stream open. It hands each request to
// the gateway's handler in process (a recorder for the response), so that a thousand
// sessions are quick to make.
type abandoning struct{ h http.Handler }

func (a abandoning) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodDelete {
		return nil, errors.New("abandoned: no DELETE")
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+token)
	r.Host, r.RequestURI = "127.0.0.1", r.URL.RequestURI()
	rec := httptest.NewRecorder()
	a.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// TestAbandonedSessionsReaped: 1,000 downstream sessions, each subscribed to a resource,
// are abandoned (no DELETE, no stream). Once the idle timeout has passed on the reaper's
// clock, every session is closed, the upstream subscription is released, and neither
// goroutines nor the heap have grown from before the sessions.
func TestAbandonedSessionsReaped(t *testing.T) {
	const n = 1000
	up, cfg := subscribable(t, "up")
	root := newTree(t)
	mountConfig(t, root, cfg)
	gw, err := gateway.New(root, gateway.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := gw.Handler(gateway.HTTPOptions{Token: token, Addr: "127.0.0.1:0", SessionIdleTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gw.Close() })
	open := func(path string) {
		c := mcp.NewClient(&mcp.Implementation{Name: "abandoned", Version: "1"}, nil)
		cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: "http://127.0.0.1" + path,
			HTTPClient: &http.Client{Transport: abandoning{h}}, DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Error(err)
			return
		}
		if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "sub://a"}); err != nil {
			t.Error(err)
		}
		_ = cs.Close() // its DELETE is lost: the gateway's session stays
	}
	sessions := func() int {
		k := 0
		for range gw.Aggregated().Sessions() {
			k++
		}
		s, _ := gw.Server("up")
		for range s.Sessions() {
			k++
		}
		return k
	}
	// One session first, reaped, so that what is made once (handlers, workers) is in the baseline.
	open("/mcp")
	open("/mcp/servers/up")
	<-up.Subscribed
	if got := gateway.ReapIdle(h, time.Now().Add(2*time.Hour)); got != 2 {
		t.Fatalf("reaped %d warm-up sessions, want 2", got)
	}
	if got := <-up.Unsubscribed; got != "sub://a" {
		t.Fatalf("unsubscribed %q", got)
	}
	baseline := goleak.IgnoreCurrent()
	heapBefore := liveHeap()
	// Two batches of n/2: the second one must leave the heap where the first left it (the
	// runtime keeps the descriptors of goroutines that ended, so the first may not).
	var heapAfter [2]int64
	for b := range 2 {
		first := time.Now() // no session of the batch was used before
		var wg sync.WaitGroup
		work := make(chan string)
		for range 8 {
			wg.Go(func() {
				for path := range work {
					open(path)
				}
			})
		}
		for i := range n / 2 {
			work <- []string{"/mcp", "/mcp/servers/up"}[i%2]
		}
		close(work)
		wg.Wait()
		if t.Failed() {
			return
		}
		<-up.Subscribed
		if got := sessions(); got != n/2 {
			t.Fatalf("%d sessions open, want %d", got, n/2)
		}
		last := time.Now() // nor after
		heapOpen := liveHeap()
		if got := gateway.ReapIdle(h, first.Add(59*time.Minute)); got != 0 {
			t.Fatalf("reaped %d sessions before their idle timeout", got)
		}
		if got := gateway.ReapIdle(h, last.Add(61*time.Minute)); got != n/2 {
			t.Fatalf("reaped %d sessions, want %d", got, n/2)
		}
		if got := <-up.Unsubscribed; got != "sub://a" {
			t.Fatalf("unsubscribed %q", got)
		}
		if got := sessions(); got != 0 {
			t.Fatalf("%d sessions left", got)
		}
		// The MCP client's idle connections to the upstream (bounded by its pool), both
		// ends, may differ.
		if err := goleak.Find(baseline, goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
			goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
			goleak.IgnoreAnyFunction("net/http.(*conn).serve")); err != nil {
			t.Fatalf("goroutines left after the reaping: %v", err)
		}
		heapAfter[b] = liveHeap()
		t.Logf("batch %d: live heap %d KiB before, %d KiB with %d sessions, %d KiB after reaping",
			b+1, heapBefore>>10, heapOpen>>10, n/2, heapAfter[b]>>10)
		if b == 1 && heapAfter[1] > heapAfter[0]+(heapOpen-heapBefore)/20 {
			t.Fatalf("the second batch grew the heap by %d KiB after reaping (its sessions took %d KiB)",
				(heapAfter[1]-heapAfter[0])>>10, (heapOpen-heapBefore)>>10)
		}
	}
}

func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestDisposedScopeLeavesNoGoroutine: a gateway made in a plugin's scope, with downstream
// sessions on every route kind, a resource subscription and a call in flight, leaves no
// goroutine once that scope is disposed, without Close: its route workers, reaper, session
// watchers and requests are effects of the scope. The call is cancelled upstream.
func TestDisposedScopeLeavesNoGoroutine(t *testing.T) {
	url, started, cancelled := hangServer(t)
	sub, cfg := subscribable(t, "sub")
	root := newTree(t)
	mountHTTP(t, root, "up", url)
	mountConfig(t, root, cfg)
	baseline := goleak.IgnoreCurrent()

	gws := make(chan *gateway.Gateway, 1)
	host := ctx.Define(ctx.Meta{Name: "gateway-host"}, func(c *ctx.Context, _ struct{}) error {
		gw, err := gateway.New(c, gateway.Options{})
		if err != nil {
			return err
		}
		gws <- gw
		return nil
	})
	s := ctxtest.MountActive(t, root, host, nil)
	gw := <-gws
	h, err := gw.Handler(gateway.HTTPOptions{Token: token, Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	agg := connect(t, srv.URL+"/mcp", nil)
	clients := []*mcp.ClientSession{agg, connect(t, srv.URL+"/mcp/servers/up", nil), connect(t, srv.URL+gateway.PathSearch, nil)}
	if err := agg.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "sub://a"}); err != nil {
		t.Fatal(err)
	}
	<-sub.Subscribed
	returned := make(chan error, 1)
	go func() {
		_, err := agg.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__up__hang"})
		returned <- err
	}()
	within(t, "the call reaching the server", started)

	if err := s.Dispose(t.Context()); err != nil {
		t.Fatal(err)
	}
	within(t, "the call cancelled upstream", cancelled)
	if got := <-sub.Unsubscribed; got != "sub://a" {
		t.Fatalf("unsubscribed %q", got)
	}
	select {
	case err := <-returned:
		t.Logf("the call in flight returned: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the call in flight did not return after the gateway's scope was disposed")
	}
	for range gw.Aggregated().Sessions() {
		t.Fatal("a downstream session outlived the gateway's scope")
	}
	// The downstream clients are the test's: closed, with the test server's connections.
	for _, cs := range clients {
		_ = cs.Close()
	}
	srv.Close()
	if err := goleak.Find(baseline, goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("net/http.(*conn).serve")); err != nil {
		t.Fatalf("goroutines left after the gateway's scope was disposed: %v", err)
	}
}

// TestPanicAnswersOneRequest: a panic while the gateway handles one request (a bug) answers
// that request with an internal error; the session, and the gateway, go on.
func TestPanicAnswersOneRequest(t *testing.T) {
	f := newAskFleet(t, nil)
	gateway.OnRequest(f.gw, func(method string) {
		if method == "resources/list" {
			panic("a bug")
		}
	})
	c := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), mcptest.InMemory(t, f.gw.Aggregated()), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	if _, err := cs.ListResources(t.Context(), nil); err == nil || !strings.Contains(err.Error(), "internal error: the gateway failed while handling this request") {
		t.Fatalf("the request that panicked: %v", err)
	}
	if res, err := cs.ListTools(t.Context(), nil); err != nil || len(res.Tools) == 0 {
		t.Fatalf("the session after the panic: %v %v", res, err)
	}
}
