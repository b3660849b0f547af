package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/elicitation"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// ErrUnknownRoute is matched by the error of a route lookup for an agent or server the
// gateway does not know.
var ErrUnknownRoute = errors.New("gateway: unknown route")

// ErrNotConnected is matched by the error of a per-server route whose server has not
// connected yet.
var ErrNotConnected = errors.New("gateway: server not connected")

// Options configures a [Gateway]. The zero value is usable.
type Options struct {
	// Implementation identifies the gateway on the aggregated and agent routes (nil:
	// "harness-gateway").
	Implementation *mcp.Implementation
	// Logger receives the gateway's diagnostics (nil: the context's logger).
	Logger *slog.Logger
	// Agents returns the agent scopes that agent routes serve, by layer name: a context in
	// each agent's layer (nil: none). It is called on every lookup of an agent route.
	Agents func() map[string]*ctx.Context
}

// Gateway serves what a scope tree holds as MCP servers (routes): the aggregated route (the
// root scope's tools, resources, templates and prompts), one route per agent scope, and one
// per upstream server, passed through with its original names. Each route is one
// mcp.Server kept in sync with the tree by a worker of its own, so any number of downstream
// sessions share one upstream connection per server, and a change of the tree reaches every
// session as list_changed.
//
// A Gateway is safe for concurrent use. It lives until [Gateway.Close] or until the context
// it was made with unloads.
type Gateway struct {
	c    *ctx.Context
	reg  *toolregistry.Registry
	log  *slog.Logger
	opts Options

	life   context.Context
	stop   context.CancelFunc
	wg     sync.WaitGroup
	closed atomic.Bool

	mu      sync.Mutex
	agg     *scopeRoute
	agents  map[string]*scopeRoute
	servers map[string]*serverRoute
	search  *searchRoute                   // made by the first Search (search.go)
	heard   map[*mcpclient.Upstream]func() // upstreams whose notices we listen to

	tokens   sync.Map // upstream progress token (string) → progressTarget
	tokenSeq atomic.Uint64

	completions sync.Map // completionKey → *mcp.ServerSession shown a URL-mode elicitation
	rounds      sync.Map // request state → *roundCall waiting for a 2026-07-28 client's retry

	activeMu sync.Mutex
	active   map[*mcp.ServerSession]*activity // downstream sessions with requests in flight

	subs   *downstreamSubs // downstream sessions' resource subscriptions (subscribe.go)
	subsWG sync.WaitGroup  // their session watchers

	callsMu sync.Mutex
	calls   map[*mcp.ServerSession]map[*context.CancelCauseFunc]struct{} // requests in flight (lifecycle.go)
	posts   sync.Map                                                     // postHeader value → the POST's context
	postSeq atomic.Uint64
}

// progressTarget is the downstream session and token a forwarded progress token stands for.
type progressTarget struct {
	ss    *mcp.ServerSession
	token any
}

// New makes a gateway over c's tree, serving c's scope on the aggregated route. c must have
// the tools service (toolregistry.Key) visible. The gateway's listeners are effects of c: they
// go when c's scope unloads; call Close before that to stop the workers.
func New(c *ctx.Context, opts Options) (*Gateway, error) {
	reg, ok := toolregistry.Key.Get(c)
	if !ok || reg == nil {
		return nil, errors.New("gateway: no tools service (toolregistry) is visible from the scope")
	}
	log := opts.Logger
	if log == nil {
		log = c.Logger()
	}
	g := &Gateway{c: c, reg: reg, log: log.With("component", "gateway"), opts: opts,
		agents: map[string]*scopeRoute{}, servers: map[string]*serverRoute{},
		heard: map[*mcpclient.Upstream]func(){}, active: map[*mcp.ServerSession]*activity{},
		calls: map[*mcp.ServerSession]map[*context.CancelCauseFunc]struct{}{}}
	g.subs = newDownstreamSubs(g)
	g.life, g.stop = context.WithCancel(context.WithoutCancel(c))
	if fresh, err := prepare(c); err != nil {
		return nil, err
	} else if fresh {
		g.log.Info("gateway.Prepare did not run before the fleet connected: servers are offered elicitation and sampling from their next connection")
	}
	g.agg = g.newScopeRoute("", c)
	if _, err := toolregistry.Changed.On(c, func(ch toolregistry.Change) error {
		g.changed(ch.Owner)
		return nil
	}); err != nil {
		return nil, err
	}
	if _, err := mcpclient.StatusEvent.On(c, func(st mcpclient.Status) error {
		g.changed("mcp:" + st.Server)
		return nil
	}); err != nil {
		return nil, err
	}
	if _, err := elicitation.CompleteEvent.On(c, func(cp elicitation.Completion) error {
		g.completed(cp)
		return nil
	}); err != nil {
		return nil, err
	}
	g.syncNow(g.agg)
	return g, nil
}

// Close stops the workers and closes every downstream session. It is idempotent.
func (g *Gateway) Close() error {
	if !g.closed.CompareAndSwap(false, true) {
		return nil
	}
	g.stop()
	g.wg.Wait()
	g.mu.Lock()
	routes := g.allRoutesLocked()
	for _, stop := range g.heard {
		stop()
	}
	g.heard = nil
	g.mu.Unlock()
	for _, r := range routes {
		for _, s := range r.mcpServers() {
			for ss := range s.Sessions() {
				_ = ss.Close()
			}
		}
	}
	g.subs.close()
	g.subsWG.Wait()
	return nil
}

// route is what every route has: its server (nil until it can be built), every server
// that may have sessions (a per-server route keeps older ones), and its worker.
type route interface {
	mcpServer() *mcp.Server
	mcpServers() []*mcp.Server
	kick()
	serves(server string) bool
}

func (g *Gateway) allRoutesLocked() []route {
	out := []route{g.agg}
	for _, r := range g.agents {
		out = append(out, r)
	}
	for _, r := range g.servers {
		out = append(out, r)
	}
	if g.search != nil {
		out = append(out, g.search)
	}
	return out
}

// changed kicks the routes a change of owner (a tool set owner, "mcp:<server>" for an MCP
// client) may affect: every scope route, and the per-server route of that server.
func (g *Gateway) changed(owner string) {
	if g.closed.Load() {
		return
	}
	g.mu.Lock()
	g.agg.kick()
	for _, r := range g.agents {
		r.kick()
	}
	if g.search != nil {
		g.search.kick()
	}
	if len(owner) > 4 && owner[:4] == "mcp:" {
		if r := g.servers[owner[4:]]; r != nil {
			r.kick()
		}
	}
	g.mu.Unlock()
}

// worker runs sync once per kick (coalesced) until the gateway closes.
func (g *Gateway) worker(name string, kicks <-chan struct{}, sync func(context.Context)) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		for {
			select {
			case <-g.life.Done():
				return
			case <-kicks:
			}
			cx, cancel := context.WithTimeout(g.life, 30*time.Second)
			func() {
				defer func() {
					if p := recover(); p != nil {
						g.log.Error("route sync panicked", "route", name, "panic", fmt.Sprint(p))
					}
				}()
				sync(cx)
			}()
			cancel()
		}
	}()
}

// Aggregated returns the aggregated route's server.
func (g *Gateway) Aggregated() *mcp.Server { return g.agg.srv }

// Agent returns the server of the agent route for layer, creating it on first use.
func (g *Gateway) Agent(layer string) (*mcp.Server, error) {
	var agents map[string]*ctx.Context
	if g.opts.Agents != nil {
		agents = g.opts.Agents()
	}
	ac, ok := agents[layer]
	if !ok {
		return nil, fmt.Errorf("%w: no agent scope %q (agents: %v)", ErrUnknownRoute, layer, sortedKeys(agents))
	}
	g.mu.Lock()
	r := g.agents[layer]
	fresh := r == nil || r.sc.Scope() != ac.Scope()
	if fresh {
		r = g.newScopeRoute(layer, ac)
		g.agents[layer] = r
	}
	g.mu.Unlock()
	if fresh {
		g.syncNow(r)
	}
	return r.srv, nil
}

// syncNow syncs a new route on the caller's goroutine, so that its first session sees
// what the tree holds.
func (g *Gateway) syncNow(r interface{ sync(context.Context) }) {
	cx, cancel := context.WithTimeout(g.life, 30*time.Second)
	defer cancel()
	r.sync(cx)
}

// Server returns the server of the per-server route for name, creating it on first use.
// A server that has never connected is an error wrapping ErrNotConnected.
//
// The server is the one new sessions get: it was built from the upstream's latest
// initialize answer (identity, instructions, capabilities). After a reconnect that answers
// differently, Server returns a new server; sessions of the earlier one keep the
// capabilities they initialized with, and their lists stay in sync.
func (g *Gateway) Server(name string) (*mcp.Server, error) {
	r, err := g.serverRoute(name)
	if err != nil {
		return nil, err
	}
	return r.current()
}

// serverRoute returns the per-server route for name, creating it on first use.
func (g *Gateway) serverRoute(name string) (*serverRoute, error) {
	u, ok := mcpclient.LookupUpstream(g.c, name)
	if !ok {
		return nil, fmt.Errorf("%w: no MCP server %q is visible from the gateway", ErrUnknownRoute, name)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.servers[name]
	if r == nil || r.up != u {
		r = g.newServerRoute(name, u)
		g.servers[name] = r
	}
	return r, nil
}

// current returns the route's server for a new session, building it when the upstream's
// initialize answer is not the one it was built from, and syncing it before it is returned
// when its lists were never applied (the worker may have built it and be listing still: a
// session must not see capabilities whose items are missing).
func (r *serverRoute) current() (*mcp.Server, error) {
	s, err := r.build()
	if err != nil {
		return nil, err
	}
	if !r.synced(s) {
		r.g.syncNow(r)
	}
	return s, nil
}

// listen subscribes the gateway to u's notices, once per upstream.
func (g *Gateway) listen(u *mcpclient.Upstream) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.heard == nil {
		return
	}
	if _, ok := g.heard[u]; ok {
		return
	}
	g.heard[u] = u.Listen(func(n mcpclient.Notice) { g.notice(u, n) })
}

// notice handles one upstream notice: list changes resync the routes serving the server,
// resource updates reach the subscribed sessions, log messages every session of those
// routes (the SDK applies each session's logging/setLevel), progress the session whose
// call it reports on.
func (g *Gateway) notice(u *mcpclient.Upstream, n mcpclient.Notice) {
	if n.Kind == mcpclient.NoticeProgress {
		g.forwardProgress(n.Progress)
		return
	}
	g.mu.Lock()
	var routes []route
	for _, r := range g.allRoutesLocked() {
		if r.serves(n.Server) {
			routes = append(routes, r)
		}
	}
	g.mu.Unlock()
	cx, cancel := context.WithTimeout(g.life, time.Second)
	defer cancel()
	for _, r := range routes {
		switch n.Kind {
		case mcpclient.NoticeResourceListChanged, mcpclient.NoticePromptListChanged:
			r.kick()
		case mcpclient.NoticeResourceUpdated:
			for _, s := range r.mcpServers() {
				_ = s.ResourceUpdated(cx, n.Updated)
			}
		case mcpclient.NoticeLog:
			for _, s := range r.mcpServers() {
				for ss := range s.Sessions() {
					_ = ss.Log(cx, n.Log)
				}
			}
		}
	}
}

// progressMeta returns the _meta carrying a gateway token for the downstream call req when
// it asked for progress, and the function that forgets the token.
func (g *Gateway) progressMeta(ss *mcp.ServerSession, tok any) (mcp.Meta, func()) {
	if tok == nil || ss == nil {
		return nil, func() {}
	}
	key := fmt.Sprintf("gw-%d", g.tokenSeq.Add(1))
	g.tokens.Store(key, progressTarget{ss: ss, token: tok})
	return mcp.Meta{"progressToken": key}, func() { g.tokens.Delete(key) }
}

func (g *Gateway) forwardProgress(p *mcp.ProgressNotificationParams) {
	if p == nil {
		return
	}
	key, _ := p.ProgressToken.(string)
	v, ok := g.tokens.Load(key)
	if !ok {
		return
	}
	t := v.(progressTarget)
	cx, cancel := context.WithTimeout(g.life, time.Second)
	defer cancel()
	_ = t.ss.NotifyProgress(cx, &mcp.ProgressNotificationParams{
		ProgressToken: t.token, Progress: p.Progress, Total: p.Total, Message: p.Message,
	})
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// levelForwarder is the receiving middleware of every route: once a downstream session sets
// a logging level, the upstreams of the route are asked for everything ("debug"), and each
// downstream session's own level filters what it receives (the go-sdk server session does).
func levelForwarder(ups func() []*mcpclient.Upstream) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(cx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(cx, method, req)
			if method == "logging/setLevel" && err == nil {
				for _, u := range ups() {
					if cs := u.Session(); cs != nil && capsOf(cs).Logging != nil {
						_ = cs.SetLoggingLevel(cx, &mcp.SetLoggingLevelParams{Level: "debug"})
					}
				}
			}
			return res, err
		}
	}
}
