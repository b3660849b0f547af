package gateway

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpresources"
)

// downstreamSubs holds the resource subscriptions of a route's downstream sessions: one
// reference to the MCP client's shared, reference-counted subscription per session and URI
// (mcpclient.Upstream.Subscribe), released by the session's resources/unsubscribe or by the
// end of the session. The SDK's server delivers each update only to the sessions subscribed
// to its URI. It is safe for concurrent use; its zero value is not ready (newDownstreamSubs).
type downstreamSubs struct {
	g *Gateway

	mu        sync.Mutex
	bySession map[*mcp.ServerSession]map[string]mcpresources.Subscription // nil once closed
}

func newDownstreamSubs(g *Gateway) *downstreamSubs {
	return &downstreamSubs{g: g, bySession: map[*mcp.ServerSession]map[string]mcpresources.Subscription{}}
}

// subscribe gives ss a reference to u's subscription of uri; a second subscribe of the same
// URI by the same session keeps the one it has.
func (d *downstreamSubs) subscribe(cx context.Context, ss *mcp.ServerSession, u *mcpclient.Upstream, uri string) error {
	d.mu.Lock()
	held := d.bySession[ss][uri] != nil
	d.mu.Unlock()
	if held {
		return nil
	}
	sub, err := u.Subscribe(cx, uri)
	if err != nil {
		return err
	}
	d.mu.Lock()
	if d.bySession == nil || d.bySession[ss][uri] != nil {
		// The gateway closed meanwhile, or a concurrent subscribe of the same session won.
		d.mu.Unlock()
		return sub.Close()
	}
	uris := d.bySession[ss]
	fresh := uris == nil
	if fresh {
		uris = map[string]mcpresources.Subscription{}
		d.bySession[ss] = uris
	}
	uris[uri] = sub
	d.mu.Unlock()
	if fresh {
		d.g.whenEnded("gateway:subscriptions", ss, func() { d.releaseSession(ss) })
	}
	return nil
}

// unsubscribe releases ss's reference to uri, if it holds one.
func (d *downstreamSubs) unsubscribe(ss *mcp.ServerSession, uri string) error {
	d.mu.Lock()
	sub := d.bySession[ss][uri]
	delete(d.bySession[ss], uri)
	d.mu.Unlock()
	if sub == nil {
		return nil
	}
	return sub.Close()
}

// releaseSession releases every reference of a session that ended.
func (d *downstreamSubs) releaseSession(ss *mcp.ServerSession) {
	d.mu.Lock()
	uris := d.bySession[ss]
	delete(d.bySession, ss)
	d.mu.Unlock()
	for uri, sub := range uris {
		if err := sub.Close(); err != nil {
			d.g.log.Warn("releasing a closed session's subscription failed", "uri", uri, "err", err)
		}
	}
}

// close releases every reference; later subscribes release theirs at once.
func (d *downstreamSubs) close() {
	d.mu.Lock()
	all := d.bySession
	d.bySession = nil
	d.mu.Unlock()
	for _, uris := range all {
		for _, sub := range uris {
			_ = sub.Close()
		}
	}
}
