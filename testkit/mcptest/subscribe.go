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
// without) and reports each one on its own side: on Subscribed the URI of every subscription
// once the server has recorded it (a resources/subscribe answered, or a subscriptions/listen
// stream acknowledged), so that an [Subscribable.Update] sent after it reaches the session;
// on Unsubscribed the URI of every resources/unsubscribe and of every listen stream that
// ended. The channels hold 64 reports; a test that lets more pile up blocks the server.
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
		opts.SubscribeHandler = func(context.Context, *mcp.SubscribeRequest) error { return nil }
		opts.UnsubscribeHandler = func(_ context.Context, r *mcp.UnsubscribeRequest) error {
			s.unsubs.Add(1)
			s.Unsubscribed <- r.Params.URI
			return nil
		}
	}
	s.Server = mcp.NewServer(&mcp.Implementation{Name: "subscribable", Version: "1"}, opts)
	subscribed := func(uri string) {
		s.subs.Add(1)
		s.Subscribed <- uri
	}
	s.Server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(cx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(cx, method, req)
			if p, ok := req.GetParams().(*mcp.SubscribeParams); ok && method == "resources/subscribe" && err == nil {
				subscribed(p.URI)
			}
			return res, err
		}
	})
	s.Server.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(cx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(cx, method, req)
			if p, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams); ok && err == nil {
				for _, uri := range p.Notifications.ResourceSubscriptions {
					subscribed(uri)
				}
			}
			return res, err
		}
	})
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
