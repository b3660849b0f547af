package mcpmanager

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/internal/demoserver"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/testkit/regtest"
)

// mcpManager/progress over real HTTP: a demo server's slow tool reports progress, the
// stream shows it with the server and tool, then its Done; a stream opened while a call
// is in flight starts with that call's latest value.
func TestRemoteProgress(t *testing.T) {
	t.Parallel()
	dh, closeSessions := demoserver.HandlerWithClose(demoserver.Options{})
	hs := httptest.NewServer(dh)
	t.Cleanup(func() { closeSessions(); hs.Close() })
	settings := fmt.Sprintf("servers:\n  d:\n    transport: streamable-http\n    url: %q\n", hs.URL+"/mcp")
	h := newHost(t, hostOptions{settings: &settings})
	cl := h.remoteClient()
	h.waitStatus(StateConnected, "d")
	cx := ctxtest.Wait(t)

	open := func() (<-chan CallProgress, context.CancelFunc, <-chan error) {
		scx, stop := context.WithCancel(cx)
		vals := make(chan CallProgress, 1024)
		errc := make(chan error, 1)
		go func() {
			errc <- MethodProgress.Call(scx, cl, struct{}{}, func(p CallProgress) error {
				vals <- p
				return nil
			})
		}()
		return vals, stop, errc
	}
	first, stop1, err1 := open()

	reg, _ := toolregistry.Key.Get(h.root)
	var done <-chan regtest.Outcome
	var p CallProgress
	// The stream is set up on its own goroutine: a call that ends before it follows is
	// called again.
	for seen := false; !seen; {
		done = regtest.Start(cx, reg, h.root, "mcp__d__slow", json.RawMessage(`{"ms":1500}`), toolregistry.ExecOptions{CallID: "call_progress"})
	wait:
		for {
			select {
			case p = <-first:
				if seen = p.Progress.Progress > 0 && !p.Done; seen {
					break wait
				}
			case o := <-done:
				if o.Err != nil {
					t.Fatal(o.Err)
				}
				break wait
			}
		}
	}
	if p.Server != "d" || p.Method != "tools/call" || p.Target != "slow" || p.CallID != "call_progress" || p.Total != 1500 || p.Done || p.ID == "" {
		t.Fatalf("progress value: %+v", p)
	}

	// A second stream, opened mid-call, starts with the call in flight.
	second, stop2, err2 := open()
	select {
	case q := <-second:
		if q.ID != p.ID || q.Done {
			t.Fatalf("second stream's first value: %+v, want the call %s in flight", q, p.ID)
		}
	case o := <-done:
		t.Fatalf("the 1.5 s call ended (%v) before a second stream was set up", o.Err)
	}
	if err := (<-done).Err; err != nil {
		t.Fatal(err)
	}
	for _, vals := range []<-chan CallProgress{first, second} {
		for q := range vals {
			if q.ID == p.ID && q.Done {
				if q.Err != "" || q.Elapsed <= 0 {
					t.Fatalf("done value: %+v", q)
				}
				break
			}
		}
	}
	stop1()
	stop2()
	for _, errc := range []<-chan error{err1, err2} {
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("stream after leaving: %v", err)
		}
	}
}

// The hub coalesces a slow stream's values by request and keeps the Done.
func TestProgressHubCoalesces(t *testing.T) {
	h := &progressHub{calls: make(map[string]CallProgress), subs: make(map[*progressSub]struct{})}
	s, ok := h.subscribe()
	if !ok {
		t.Fatal("subscribe refused")
	}
	for i := 1; i <= 5; i++ {
		_ = h.on(mcpclient.Progress{Server: "a", Token: "t1", Progress: float64(i)})
	}
	_ = h.on(mcpclient.Progress{Server: "b", Token: "t2", Progress: 1})
	_ = h.on(mcpclient.Progress{Server: "a", Token: "t1", Done: true})
	vals, closed := h.take(s)
	if closed || len(vals) != 2 || vals[0].Server != "a" || !vals[0].Done || vals[1].Server != "b" || vals[1].Progress.Progress != 1 {
		t.Fatalf("pending after 7 values: %+v (closed %v)", vals, closed)
	}
	if len(h.calls) != 1 || len(h.order) != 1 || h.order[0] != vals[1].ID {
		t.Fatalf("in flight: %v %v", h.calls, h.order)
	}
	// A progress value arriving after its request ended never brings it back.
	_ = h.on(mcpclient.Progress{Server: "a", Token: "t1", Progress: 6})
	if vals, _ := h.take(s); len(vals) != 0 || len(h.calls) != 1 {
		t.Fatalf("a late value after Done: sent %+v, in flight %v", vals, h.calls)
	}
	// A client disposed with a call in flight: the call ends.
	scope := ctxtest.New(t).Scope()
	_ = h.on(mcpclient.Progress{Server: "c", Scope: scope, Token: "t3", Progress: 1})
	_ = h.onStatus(mcpclient.Status{Phase: mcpclient.PhaseDisposed, Scope: scope})
	vals, _ = h.take(s)
	if len(vals) != 1 || !vals[0].Done || vals[0].Server != "c" || vals[0].Err == "" || len(h.calls) != 1 { // coalesced
		t.Fatalf("after the client's disposal: %+v, in flight %v", vals, h.calls)
	}
	_ = h.close(context.Background())
	select {
	case <-s.wake:
	default:
		t.Fatal("close did not wake the stream")
	}
	if _, closed := h.take(s); !closed {
		t.Fatal("take after close: not closed")
	}
	if _, ok := h.subscribe(); ok {
		t.Fatal("subscribe after close accepted")
	}
}

// mcpManager/list answers the same bytes while the snapshot's version stands, and the new
// snapshot once it changes.
func TestRemoteListCached(t *testing.T) {
	t.Parallel()
	fc := newFakeClients()
	settings := "servers:\n" + fakeEntry("a", "")
	h := newHost(t, hostOptions{settings: &settings, hooks: &hooks{client: fc.def}})
	cl := h.remoteClient()
	h.waitStatus(StateConnected, "a")
	cx := ctxtest.Wait(t)
	list := func() (json.RawMessage, Snapshot) {
		var raw json.RawMessage
		if err := cl.Call(cx, "mcpManager/list", nil, &raw); err != nil {
			t.Fatal(err)
		}
		var s Snapshot
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		return raw, s
	}
	first, s1 := list()
	again, _ := list()
	if string(first) != string(again) {
		t.Fatalf("two lists of one version differ:\n%s\n%s", first, again)
	}
	h.write(settings + fakeEntry("b", ""))
	h.waitStatus(StateConnected, "b")
	_, s2 := list()
	if _, ok := find(s2, "b"); !ok || s2.Version <= s1.Version {
		t.Fatalf("after adding b: version %d → %d, servers %v", s1.Version, s2.Version, names(s2))
	}
}
