package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpresources"
)

// ResourceChange is one notifications/resources/updated (URI set) or
// notifications/resources/list_changed (URI empty) a server sent. It is a plain value.
type ResourceChange struct {
	// Server is the configured serverName.
	Server string `json:"server"`
	// Scope is the client plugin's scope, which identifies the instance.
	Scope *ctx.Scope `json:"-"`
	// URI is the updated resource ("" for a list change).
	URI string `json:"uri,omitempty"`
}

// ResourceUpdatedEvent is emitted from the client's context for every
// notifications/resources/updated its server sends (servers send them for the URIs
// subscribed with [Upstream.Subscribe] or mcpresources.Service.Subscribe), and
// ResourceListChangedEvent for every notifications/resources/list_changed. Listeners run on
// the SDK's notification goroutine and must return quickly (read the resource elsewhere); a
// listener error is logged.
var (
	ResourceUpdatedEvent     = ctx.NewEvent[ResourceChange]("mcp-client/resource-updated")
	ResourceListChangedEvent = ctx.NewEvent[ResourceChange]("mcp-client/resources-list-changed")
)

// newProtocol is the first protocol version whose subscriptions are a long-lived
// subscriptions/listen request rather than resources/subscribe.
const newProtocol = "2026-07-28"

// subscriptions counts the references to the client's resource subscriptions, per URI, and
// keeps them on the wire: one resources/subscribe per URI for the live session whatever the
// number of subscribers, resources/unsubscribe when the last goes, and the same
// subscriptions again on every new session (a reconnect). Its zero value is ready.
type subscriptions struct {
	// op serialises wire changes: a subscribe, an unsubscribe or a resend at a time, so a
	// URI is never subscribed twice on one session.
	op   sync.Mutex
	refs map[string]*subRef // guarded by op
}

// subRef is one URI's references and the generation its wire subscription is on (nil:
// none, after a failed resend). Guarded by subscriptions.op.
type subRef struct {
	n  int
	on *generation
}

// subscription is one reference; Close releases it.
type subscription struct {
	s    *supervisor
	uri  string
	once sync.Once
}

// Close releases the reference; the last one of its URI unsubscribes on the live session.
func (h *subscription) Close() error {
	var err error
	h.once.Do(func() { err = h.s.release(h.uri) })
	return err
}

// subscribe takes a reference to uri's subscription, subscribing on the live session if it
// is the first.
func (s *supervisor) subscribe(cx context.Context, uri string) (mcpresources.Subscription, error) {
	if uri == "" {
		return nil, fmt.Errorf("mcp server %q: resources/subscribe needs a URI", s.cfg.ServerName)
	}
	subs := &s.subs
	subs.op.Lock()
	defer subs.op.Unlock()
	g := s.live.Load()
	if r := subs.refs[uri]; r != nil {
		if r.on == nil && g != nil {
			// Resending after a reconnect failed: this subscriber tries again.
			if err := s.checkSubscribe(g); err != nil {
				return nil, err
			}
			if err := s.wireSubscribe(cx, g, uri); err != nil {
				return nil, err
			}
			r.on = g
		}
		r.n++
		return &subscription{s: s, uri: uri}, nil
	}
	if g == nil {
		return nil, s.unavailable()
	}
	if err := s.checkSubscribe(g); err != nil {
		return nil, err
	}
	if err := s.wireSubscribe(cx, g, uri); err != nil {
		return nil, err
	}
	if subs.refs == nil {
		subs.refs = map[string]*subRef{}
	}
	subs.refs[uri] = &subRef{n: 1, on: g}
	return &subscription{s: s, uri: uri}, nil
}

// checkSubscribe fails unless g's server offers resources.subscribe.
func (s *supervisor) checkSubscribe(g *generation) error {
	if r := g.conn.Info().Capabilities.Resources; r == nil || !r.Subscribe {
		return noSubscribeError(s.cfg.ServerName)
	}
	return nil
}

// noSubscribeError says that server cannot subscribe; it matches mcpresources.ErrNoSubscribe.
type noSubscribeError string

func (e noSubscribeError) Error() string {
	return fmt.Sprintf("mcp server %q does not support resource subscriptions (no resources.subscribe capability)", string(e))
}

func (e noSubscribeError) Is(target error) bool { return target == mcpresources.ErrNoSubscribe }

// release drops a reference to uri; the last one unsubscribes on the session that holds the
// subscription, if it is still live.
func (s *supervisor) release(uri string) error {
	subs := &s.subs
	subs.op.Lock()
	defer subs.op.Unlock()
	r := subs.refs[uri]
	if r == nil {
		return nil
	}
	if r.n--; r.n > 0 {
		return nil
	}
	delete(subs.refs, uri)
	g := s.live.Load()
	if r.on == nil || r.on != g {
		return nil // that session is gone, and its subscriptions with it
	}
	cx, cancel := context.WithTimeout(context.WithoutCancel(s.c), s.cfg.ToolCallTimeout())
	defer cancel()
	cx, done := g.bind(cx)
	defer done()
	if err := g.conn.Session().Unsubscribe(cx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
		return s.callError(cx, g, "resources/unsubscribe "+uri, err)
	}
	return nil
}

// resubscribe subscribes the new generation g to every URI that still has references. A
// refusal is logged; the references stay (they are released as usual).
func (s *supervisor) resubscribe(runcx context.Context, g *generation) {
	subs := &s.subs
	subs.op.Lock()
	defer subs.op.Unlock()
	uris := make([]string, 0, len(subs.refs))
	for uri, r := range subs.refs {
		if r.on != g {
			uris = append(uris, uri)
		}
	}
	slices.Sort(uris)
	for _, uri := range uris {
		r := subs.refs[uri]
		r.on = nil
		err := s.checkSubscribe(g)
		if err == nil {
			cx, cancel := context.WithTimeout(runcx, s.cfg.ToolCallTimeout())
			err = s.wireSubscribe(cx, g, uri)
			cancel()
		}
		if err != nil {
			if runcx.Err() == nil {
				s.log.Warn("resubscribing after a reconnect failed", "uri", uri, "err", s.scrubErr(err))
			}
			continue
		}
		r.on = g
	}
}

// wireSubscribe subscribes g's session to uri: resources/subscribe, or from protocol
// 2026-07-28 on a subscriptions/listen request that stays open until Unsubscribe (the SDK
// holds it), established once the server acknowledged it.
func (s *supervisor) wireSubscribe(cx context.Context, g *generation, uri string) error {
	cs := g.conn.Session()
	what := "resources/subscribe " + uri
	if g.conn.Info().ProtocolVersion < newProtocol {
		cx, done := g.bind(cx)
		defer done()
		if err := cs.Subscribe(cx, &mcp.SubscribeParams{URI: uri}); err != nil {
			return s.callError(cx, g, what, err)
		}
		return nil
	}
	acked := g.acks.expect(uri)
	defer g.acks.forget(uri, acked)
	failed := make(chan error, 1)
	go func() {
		// Returns when the stream ends: Unsubscribe, the session's close, or a refusal.
		if err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: uri}); err != nil {
			failed <- err
		}
	}()
	select {
	case <-acked:
		return nil
	case err := <-failed:
		_ = cs.Unsubscribe(context.Background(), &mcp.UnsubscribeParams{URI: uri})
		return s.callError(cx, g, what, err)
	case <-cx.Done():
		_ = cs.Unsubscribe(context.Background(), &mcp.UnsubscribeParams{URI: uri})
		return fmt.Errorf("mcp server %q: %s: no acknowledgement: %w", s.cfg.ServerName, what, context.Cause(cx))
	case <-g.life.Done():
		return &unavailableError{msg: fmt.Sprintf("mcp server %q: the connection was closed during %s", s.cfg.ServerName, what)}
	}
}

// ackWaiters hands the acknowledgements of subscriptions/listen requests (protocol
// 2026-07-28) to the subscribe waiting for them, by URI. Its zero value is ready; it is
// safe for concurrent use.
type ackWaiters struct {
	mu      sync.Mutex
	waiting map[string]chan struct{}
}

// expect registers a waiter for uri's acknowledgement.
func (a *ackWaiters) expect(uri string) chan struct{} {
	ch := make(chan struct{}, 1)
	a.mu.Lock()
	if a.waiting == nil {
		a.waiting = map[string]chan struct{}{}
	}
	a.waiting[uri] = ch
	a.mu.Unlock()
	return ch
}

func (a *ackWaiters) forget(uri string, ch chan struct{}) {
	a.mu.Lock()
	if a.waiting[uri] == ch {
		delete(a.waiting, uri)
	}
	a.mu.Unlock()
}

// acknowledged handles one notifications/subscriptions/acknowledged: every waiting URI the
// server agreed to is established. Acknowledgements that name none of them (the SDK's own
// listen request for list changes) are not answers: a server that refuses a subscription
// after advertising resources.subscribe fails the listen request instead.
func (a *ackWaiters) acknowledged(p *mcp.SubscriptionsAcknowledgedParams) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, uri := range p.Notifications.ResourceSubscriptions {
		if ch, ok := a.waiting[uri]; ok {
			ch <- struct{}{}
			delete(a.waiting, uri)
		}
	}
}

// resourceHandlers makes g's sessions emit the resource events and hand subscription
// acknowledgements to g's waiters. It runs on the client options of each session, after
// the gateway's handlers (which it calls too).
func (s *supervisor) resourceHandlers(co *mcp.ClientOptions) {
	updated, listChanged := co.ResourceUpdatedHandler, co.ResourceListChangedHandler
	co.ResourceUpdatedHandler = func(cx context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
		if r.Params != nil {
			s.emitResource(ResourceUpdatedEvent, ResourceChange{Server: s.cfg.ServerName, Scope: s.c.Scope(), URI: r.Params.URI})
		}
		if updated != nil {
			updated(cx, r)
		}
	}
	co.ResourceListChangedHandler = func(cx context.Context, r *mcp.ResourceListChangedRequest) {
		s.emitResource(ResourceListChangedEvent, ResourceChange{Server: s.cfg.ServerName, Scope: s.c.Scope()})
		if listChanged != nil {
			listChanged(cx, r)
		}
	}
}

// ackMiddleware passes subscriptions/listen acknowledgements to g's waiters.
func ackMiddleware(g *generation) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(cx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/subscriptions/acknowledged" {
				if p, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams); ok && p != nil {
					g.acks.acknowledged(p)
				}
			}
			return next(cx, method, req)
		}
	}
}

func (s *supervisor) emitResource(ev ctx.Event[ResourceChange], ch ResourceChange) {
	if err := ev.Emit(s.c, ch); err != nil && !errors.Is(err, ctx.ErrInactive) {
		s.log.Warn("resource listener failed", "event", ev.Name(), "err", err)
	}
}

// Subscribe implements mcpresources.Subscriber: one reference to the server's subscription
// of uri (see mcpresources.Service.Subscribe).
func (p resourceProvider) Subscribe(cx context.Context, uri string, _ mcpresources.CallerInfo) (mcpresources.Subscription, error) {
	return p.s.subscribe(cx, uri)
}

// Subscribe takes one reference to the server's subscription of uri, shared with every
// other subscriber of the same URI on this client (the resource service's, other
// gateway sessions'): the first reference sends resources/subscribe, the last Close sends
// resources/unsubscribe, and a reconnect subscribes the new session again. The server's
// updates arrive as notices (NoticeResourceUpdated) and as [ResourceUpdatedEvent]. A server
// without the resources.subscribe capability fails with an error wrapping
// mcpresources.ErrNoSubscribe that names it; a client that is not connected fails with
// [ErrUnavailable].
func (u *Upstream) Subscribe(cx context.Context, uri string) (mcpresources.Subscription, error) {
	return u.s.subscribe(cx, uri)
}
