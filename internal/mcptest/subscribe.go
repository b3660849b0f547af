package mcptest

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SubscribableURIs are the resources of a [Subscribable] server.
var SubscribableURIs = []string{"sub://a", "sub://b"}

// Subscribable is a go-sdk server with the text resources [SubscribableURIs] ("contents of
// <uri>") and resource list changes, which accepts resource subscriptions (unless made
// without) and reports each one it receives on its own side: the URI of every
// resources/subscribe on Subscribed, of every resources/unsubscribe on Unsubscribed (a
// subscriptions/listen stream counts as both, at its start and its end). The channels hold
// 64 reports; a test that lets more pile up blocks the server.
//
// A Subscribable is safe for concurrent use.
type Subscribable struct {
	Server                   *mcp.Server
	Subscribed, Unsubscribed chan string
	subs, unsubs             atomic.Int32
}

// NewSubscribable makes the server; with subscribe false it has no resources.subscribe
// capability.
func NewSubscribable(subscribe bool) *Subscribable {
	s := &Subscribable{Subscribed: make(chan string, 64), Unsubscribed: make(chan string, 64)}
	opts := &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{ListChanged: true}}}
	if subscribe {
		opts.SubscribeHandler = func(_ context.Context, r *mcp.SubscribeRequest) error {
			s.subs.Add(1)
			s.Subscribed <- r.Params.URI
			return nil
		}
		opts.UnsubscribeHandler = func(_ context.Context, r *mcp.UnsubscribeRequest) error {
			s.unsubs.Add(1)
			s.Unsubscribed <- r.Params.URI
			return nil
		}
	}
	s.Server = mcp.NewServer(&mcp.Implementation{Name: "subscribable", Version: "1"}, opts)
	for _, uri := range SubscribableURIs {
		s.Server.AddResource(&mcp.Resource{URI: uri, Name: uri[len("sub://"):], MIMEType: "text/plain"},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "contents of " + req.Params.URI}}}, nil
			})
	}
	return s
}

// Counts returns how many subscriptions and unsubscriptions the server received.
func (s *Subscribable) Counts() (subscribes, unsubscribes int) {
	return int(s.subs.Load()), int(s.unsubs.Load())
}

// Update sends notifications/resources/updated for uri to the sessions subscribed to it.
func (s *Subscribable) Update(t testing.TB, uri string) {
	t.Helper()
	if err := s.Server.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
}
