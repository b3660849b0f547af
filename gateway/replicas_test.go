package gateway_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/gateway/redisstore"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/testkit/redistest"
)

// replica is one gateway of a set sharing a Redis store, on an httptest server.
type replica struct {
	gw  *gateway.Gateway
	srv *httptest.Server
}

func startReplica(t *testing.T, name, redisURL, demo string, sub mcpclient.Config) *replica {
	t.Helper()
	store, err := redisstore.Open(t.Context(), redisstore.Options{URL: redisURL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	root := newTree(t)
	mountHTTP(t, root, "demo", demo)
	mountConfig(t, root, sub)
	gw, err := gateway.New(root, gateway.Options{Store: store, Replica: name})
	if err != nil {
		t.Fatal(err)
	}
	h, err := gw.Handler(gateway.HTTPOptions{Token: token, Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{gw: gw, srv: httptest.NewServer(h)}
	t.Cleanup(r.stop)
	return r
}

// stop ends the replica as a process that stops would: its connections are cut, its
// sessions end here, and their records stay in the store.
func (r *replica) stop() {
	r.srv.CloseClientConnections()
	r.srv.Close()
	_ = r.gw.Close()
}

// balancer forwards every request to the replica it is set to, as a load balancer whose
// replica went down sends the session's requests to another.
type balancer struct {
	to  atomic.Pointer[url.URL]
	mu  sync.Mutex
	saw []string // the replica of each response (gateway.ReplicaHeader)
}

func (b *balancer) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	p := &httputil.ReverseProxy{
		Rewrite:        func(r *httputil.ProxyRequest) { r.SetURL(b.to.Load()) },
		FlushInterval:  -1,
		ModifyResponse: b.record,
	}
	p.ServeHTTP(w, req)
}

func (b *balancer) record(res *http.Response) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.saw = append(b.saw, res.Header.Get(gateway.ReplicaHeader))
	return nil
}

func (b *balancer) last() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.saw[len(b.saw)-1]
}

func (b *balancer) point(t *testing.T, r *replica) {
	t.Helper()
	u, err := url.Parse(r.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	b.to.Store(u)
}

// A session moves to another replica when its own stops: the next request is served by the
// other replica, which takes the session over from the store with its log level and its
// subscriptions (an update reaches the client through the new replica); the client's DELETE
// then deletes the record.
func TestSessionMovesToAnotherReplica(t *testing.T) {
	redis := redistest.Start(t, redistest.Options{})
	demo := demoUpstream(t)
	up, subCfg := subscribable(t, "up")
	a := startReplica(t, "a", redis.URL, demo, subCfg)
	b := startReplica(t, "b", redis.URL, demo, subCfg)
	lb := &balancer{}
	front := httptest.NewServer(lb)
	t.Cleanup(front.Close)
	lb.point(t, a)

	w := watch(t, front.URL+"/mcp", "2025-11-25")
	call := func(text string) {
		t.Helper()
		res, err := w.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp__demo__echo", Arguments: map[string]any{"text": text}})
		if err != nil || res.IsError {
			t.Fatalf("echo %q: %v %v", text, err, res)
		}
	}
	call("on a")
	if got := lb.last(); got != "a" {
		t.Fatalf("served by %q, want a", got)
	}
	if err := w.cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil { //nolint:staticcheck // SEP-2577: the level of a 2025-11-25 session moves with it
		t.Fatal(err)
	}
	w.subscribe(t, "sub://a")
	if got := <-up.Subscribed; got != "sub://a" {
		t.Fatalf("upstream subscription %q", got)
	}
	id := w.cs.ID()
	rec, err := storeOf(t, redis.URL).Session(t.Context(), id)
	if err != nil || rec.Replica != "a" || rec.State.LogLevel != "info" || len(rec.Subscriptions) != 1 {
		t.Fatalf("record on a: %+v, %v", rec, err)
	}

	a.stop()
	lb.point(t, b)
	call("on b")
	if got := lb.last(); got != "b" {
		t.Fatalf("after a stopped, served by %q, want b", got)
	}
	// b subscribed again for the session it took over, and forwards the update to it.
	if got := <-up.Subscribed; got != "sub://a" {
		t.Fatalf("b's upstream subscription %q", got)
	}
	up.Update(t, "sub://a")
	if got := w.next(t); got != "sub://a" {
		t.Fatalf("update %q after the move", got)
	}
	rec, err = storeOf(t, redis.URL).Session(t.Context(), id)
	if err != nil || rec.Replica != "b" || rec.State.LogLevel != "info" {
		t.Fatalf("record after the move: %+v, %v", rec, err)
	}
	if names := toolNames(t, w.cs); len(names) == 0 {
		t.Fatal("no tools listed after the move")
	}

	if err := w.cs.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := storeOf(t, redis.URL).Session(context.Background(), id); !errors.Is(err, gateway.ErrNoSession) {
		t.Fatalf("record after DELETE: %v", err)
	}
}

func storeOf(t *testing.T, url string) *redisstore.Store {
	t.Helper()
	s, err := redisstore.Open(t.Context(), redisstore.Options{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// alternate is a balancer that sends each request to the next replica in turn: no
// affinity at all.
type alternate struct {
	to  []*url.URL
	n   atomic.Int64
	mu  sync.Mutex
	saw map[string]int
}

func (b *alternate) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	target := b.to[int(b.n.Add(1))%len(b.to)]
	p := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }, FlushInterval: -1,
		ModifyResponse: func(res *http.Response) error {
			b.mu.Lock()
			b.saw[res.Header.Get(gateway.ReplicaHeader)]++
			b.mu.Unlock()
			return nil
		}}
	p.ServeHTTP(w, req)
}

// A client of the stateless revision (the go-sdk's, which asks for 2026-07-28 first) needs
// no affinity: with Stateless on, its requests go to either replica in turn and every call
// succeeds; no session record is written.
func TestStatelessNeedsNoAffinity(t *testing.T) {
	redis := redistest.Start(t, redistest.Options{})
	demo := demoUpstream(t)
	var to []*url.URL
	for _, name := range []string{"a", "b"} {
		store := storeOf(t, redis.URL)
		root := newTree(t)
		mountHTTP(t, root, "demo", demo)
		gw, err := gateway.New(root, gateway.Options{Store: store, Replica: name})
		if err != nil {
			t.Fatal(err)
		}
		h, err := gw.Handler(gateway.HTTPOptions{Token: token, Addr: "127.0.0.1:0", Stateless: true})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		t.Cleanup(func() { _ = gw.Close(); srv.Close() })
		u, _ := url.Parse(srv.URL)
		to = append(to, u)
	}
	lb := &alternate{to: to, saw: map[string]int{}}
	front := httptest.NewServer(lb)
	t.Cleanup(front.Close)
	cs := connect(t, front.URL+"/mcp", nil)
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s, want the stateless 2026-07-28", v)
	}
	for i := range 10 {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp__demo__echo", Arguments: map[string]any{"text": "x"}})
		if err != nil || res.IsError {
			t.Fatalf("call %d: %v %v", i, err, res)
		}
	}
	lb.mu.Lock()
	defer lb.mu.Unlock()
	if lb.saw["a"] < 3 || lb.saw["b"] < 3 {
		t.Fatalf("answers by replica: %v", lb.saw)
	}
}
