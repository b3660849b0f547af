package gateway_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/gateway"
)

// watcher is a downstream go-sdk session on protocol that reports the URIs of the
// updates it receives.
type watcher struct {
	cs      *mcp.ClientSession
	updates chan string
}

func watch(t *testing.T, url, protocol string) *watcher {
	t.Helper()
	w := &watcher{updates: make(chan string, 16)}
	c := mcp.NewClient(&mcp.Implementation{Name: "watcher", Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { w.updates <- r.Params.URI },
	})
	w.cs = dial(t, c, url, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	return w
}

func (w *watcher) subscribe(t *testing.T, uri string) {
	t.Helper()
	if err := w.cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatalf("subscribe %s: %v", uri, err)
	}
}

func (w *watcher) next(t *testing.T) string {
	t.Helper()
	select {
	case uri := <-w.updates:
		return uri
	case <-t.Context().Done():
		t.Fatal("no update")
		return ""
	}
}

// Downstream sessions of any route share the client's one upstream subscription per URI;
// an unsubscribe or the end of a session releases exactly that session's reference, and
// updates reach only the sessions subscribed to their URI.
func TestSubscriptionsPerSession(t *testing.T) {
	up, cfg := subscribable(t, "up") // resources/unsubscribe is a request on 2025-11-25: its absence is observable
	root := newTree(t)
	mountConfig(t, root, cfg)
	f := serveGateway(t, root, gateway.Options{})

	const legacy = "2025-11-25"
	a := watch(t, f.url+"/mcp", legacy)
	b := watch(t, f.url+"/mcp/servers/up", legacy)
	a.subscribe(t, "sub://a")
	a.subscribe(t, "sub://b")
	b.subscribe(t, "sub://a")
	a.subscribe(t, "sub://a") // again: still one reference
	if subs, _ := up.Counts(); subs != 2 {
		t.Fatalf("the upstream saw %d subscriptions for two URIs", subs)
	}
	<-up.Subscribed
	<-up.Subscribed

	// a lets go of sub://a; b still holds it, so the upstream keeps it.
	if err := a.cs.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: "sub://a"}); err != nil {
		t.Fatal(err)
	}
	if _, unsubs := up.Counts(); unsubs != 0 {
		t.Fatalf("one of two sessions unsubscribing sent %d unsubscriptions upstream", unsubs)
	}
	up.Update(t, "sub://a")
	up.Update(t, "sub://b")
	if got := b.next(t); got != "sub://a" {
		t.Fatalf("b got an update of %q, want sub://a", got)
	}
	if got := a.next(t); got != "sub://b" { // sub://a came first upstream: a must not get it
		t.Fatalf("a got an update of %q, want sub://b only", got)
	}

	// The end of b's session releases its reference: the upstream unsubscribes sub://a.
	_ = b.cs.Close()
	if got := <-up.Unsubscribed; got != "sub://a" {
		t.Fatalf("upstream unsubscription of %q, want sub://a", got)
	}
	_ = a.cs.Close()
	if got := <-up.Unsubscribed; got != "sub://b" {
		t.Fatalf("upstream unsubscription of %q, want sub://b", got)
	}
}
