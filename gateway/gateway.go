package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/elicitation"
	"github.com/cordisgo/harness/gateway/access"
	"github.com/cordisgo/harness/gateway/audit"
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
	// Store is the state shared with the other replicas of this gateway (nil: none, one
	// process). See [Store] and docs/gateway.md.
	Store Store
	// Replica names this replica among those sharing Store (default: the host name and
	// process id). It is sent on every response ([ReplicaHeader]) and kept in the store's
	// session records.
	Replica string
	// ShortNames shows an MCP server's tool on the aggregated and agent routes as
	// SERVER__TOOL instead of its public name mcp__SERVER__TOOL, unless another tool has
	// that name; clients call the tools by the names shown. Other agents prefix a server's
	// tools with their own mcp__NAME__, so a client of the gateway would otherwise read the
	// prefix twice (mcp__harness__mcp__demo__add). The harness binary sets it.
	ShortNames bool
	// Vault keeps the people's sealed credentials of personal servers (access.Personal),
	// shared by the replicas (gateway/redisstore implements it; nil: none, and an access
	// file with personal servers is refused).
	Vault Vault
	// Audit is where every tool call is recorded (nil: nowhere): who made it (with
	// HTTPOptions.Access), on which route, server and tool, its outcome and duration, and
	// its arguments with secret-looking values masked. See package audit.
	Audit audit.Log
	// DrainQuiet is how long [Gateway.Drain] waits, once the load balancer has seen the
	// health check fail, for no request to arrive and none to be in flight before it ends
	// (0: DefaultDrainQuiet): the balancer may still send what it dispatched before it saw
	// the check fail. A balancer that takes longer to stop sending (one whose health check
	// marks a server down only after several failures, Kubernetes' endpoints) needs more.
	DrainQuiet time.Duration
}

// Gateway serves what a scope tree holds as MCP servers (routes): the aggregated route (the
// root scope's tools, resources, templates and prompts), one route per agent scope, and one
// per upstream server, passed through with its original names. Each route is one
// mcp.Server kept in sync with the tree by a worker of its own, so any number of downstream
// sessions share one upstream connection per server, and a change of the tree reaches every
// session as list_changed.
//
// A Gateway is safe for concurrent use. It is an effect of the context it was made with:
// it lives until [Gateway.Close] or until that context's scope unloads, and then none of
// its goroutines remains (its route workers are [ctx.Worker]s, its other goroutines
// [ctx.Context.Go]s of that effect).
type Gateway struct {
	c    *ctx.Context
	reg  *toolregistry.Registry
	log  *slog.Logger
	opts Options

	life    *ctx.Context // the gateway's effect: its workers and goroutines; done once closing
	dispose ctx.Disposer

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

	repl     *replication                  // nil without Options.Store (replicas.go)
	access   atomic.Pointer[access.Policy] // the access rules (team.go); nil: none
	personal atomic.Pointer[personal]      // the personal servers (personal.go); nil: none
	audit    *audit.Writer                 // nil without Options.Audit (team.go)
	subs     *downstreamSubs               // downstream sessions' resource subscriptions (subscribe.go)
	sessions *sessionBook                  // downstream sessions and their requests (sessions.go)
	tasks    *mcpclient.TaskServer         // the tasks downstream sessions run

	onRequest func(method string) // tests only (export_test.go): runs inside each request's handling

	callsMu sync.Mutex
	calls   map[*mcp.ServerSession]map[*context.CancelCauseFunc]struct{} // requests in flight (lifecycle.go)
	drain   drainState                                                   // drain.go
	posts   sync.Map                                                     // postHeader value → the POST's context
	postSeq atomic.Uint64
}

// progressTarget is the downstream session and token a forwarded progress token stands for.
type progressTarget struct {
	ss    *mcp.ServerSession
	token any
}

// New makes a gateway over c's tree, serving c's scope on the aggregated route. c must have
// the tools service (toolregistry.Key) visible. The gateway is an effect of c: its
// listeners, workers and goroutines, and its downstream sessions, go when c's scope unloads
// or at Close.
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
	if opts.Audit != nil {
		g.audit = audit.NewWriter(opts.Audit, func(err error) { g.log.Warn("the audit trail could not be appended to", "err", err) })
	}
	if opts.Store != nil {
		name := opts.Replica
		if name == "" {
			host, _ := os.Hostname()
			name = fmt.Sprintf("%s-%d", host, os.Getpid())
		}
		g.repl = newReplication(g, opts.Store, name)
	}
	g.sessions = newSessionBook(g)
	if err := Offer(c); err != nil {
		return nil, err
	}
	dispose, err := c.Effect("gateway", func(e *ctx.Effect) error {
		g.life = e.Context()
		// The first cleanup registered runs last: after the workers and goroutines made
		// later have stopped.
		e.Defer(g.closeSessions)
		g.tasks = mcpclient.NewTaskServer(g.life)
		e.Defer(func(context.Context) error {
			g.tasks.Close(errClosed)
			return nil
		})
		g.agg = g.newScopeRoute("", c)
		if err := g.notify(); err != nil {
			return err
		}
		if _, err := toolregistry.Changed.On(g.life, func(ch toolregistry.Change) error {
			g.changed(ch.Owner)
			return nil
		}); err != nil {
			return err
		}
		if _, err := mcpclient.StatusEvent.On(g.life, func(st mcpclient.Status) error {
			g.changed(mcpclient.Owner(st.Server))
			return nil
		}); err != nil {
			return err
		}
		_, err := elicitation.CompleteEvent.On(g.life, func(cp elicitation.Completion) error {
			g.completed(cp)
			return nil
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	g.dispose = dispose
	g.syncNow(g.agg)
	return g, nil
}

// Close stops the workers and goroutines, ends the requests in flight (each is answered
// with a JSON-RPC error that says to retry it) and closes every downstream session: it disposes the gateway's effect, as the unload of its context's
// scope does. It is idempotent.
func (g *Gateway) Close() error {
	return g.dispose(context.Background())
}

// closeSessions is the gateway's last cleanup: it stops listening to the upstreams, ends the
// requests in flight (the go-sdk's close of a session waits for its handlers) and every
// downstream session.
func (g *Gateway) closeSessions(context.Context) error {
	g.mu.Lock()
	routes := g.allRoutesLocked()
	for _, stop := range g.heard {
		stop()
	}
	g.heard = nil
	g.mu.Unlock()
	// The requests in flight were ended as the close began (inFlightCall): once their
	// answers (errStopped) are written, their sessions close.
	g.awaitAnswers()
	for _, r := range routes {
		for _, s := range r.mcpServers() {
			for ss := range s.Sessions() {
				g.cancelSession(ss.ID(), errClosed)
				_ = ss.Close()
			}
		}
	}
	g.subs.close()
	g.sessions.close()
	if g.audit != nil {
		acx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := g.audit.Close(acx); err != nil {
			g.log.Warn("the audit trail's last entries were not appended", "err", err)
		}
	}
	return nil
}

// errClosed is the cause of the requests and calls a gateway's close ends.
var errClosed = errors.New("gateway: closed")

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

// changed kicks the routes a change of owner (a tool set owner, mcpclient.Owner for an MCP
// client) may affect: every scope route, and the per-server route of that server.
func (g *Gateway) changed(owner string) {
	if g.life.Err() != nil {
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
	if server, ok := mcpclient.ServerOf(owner); ok {
		if r := g.servers[server]; r != nil {
			r.kick()
		}
	}
	g.mu.Unlock()
}

// syncTimeout bounds one sync of a route.
const syncTimeout = 30 * time.Second

// worker is a route's [ctx.Worker]: one sync per kick, kicks that come during a sync
// coalescing into one more. The zero worker (the gateway was closed when the route was
// made) ignores kicks.
type worker struct {
	w    *ctx.Worker
	stop ctx.Disposer
}

// newWorker makes a route's worker running sync, an effect of the gateway.
func (g *Gateway) newWorker(label string, sync func(context.Context)) worker {
	w, stop, err := g.life.NewWorker("gateway:"+label, func(runcx context.Context) error {
		cx, cancel := context.WithTimeout(runcx, syncTimeout)
		defer cancel()
		sync(cx)
		return nil
	})
	if err != nil {
		return worker{}
	}
	return worker{w: w, stop: stop}
}

func (w worker) kick() {
	if w.w != nil {
		w.w.Kick()
	}
}

// close stops the worker of a route that was replaced, waiting for its sync in progress.
func (w worker) close() {
	if w.stop != nil {
		_ = w.stop(context.Background())
	}
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
	var old *scopeRoute
	if fresh {
		old = r
		r = g.newScopeRoute(layer, ac)
		g.agents[layer] = r
	}
	g.mu.Unlock()
	if old != nil {
		old.worker.close()
	}
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
	r := g.servers[name]
	if r != nil && r.up == u {
		g.mu.Unlock()
		return r, nil
	}
	old := r
	r = g.newServerRoute(name, u)
	g.servers[name] = r
	g.mu.Unlock()
	if old != nil {
		old.worker.close()
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

// notice handles one upstream notice: list changes and a new session resync the routes
// serving the server,
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
		case mcpclient.NoticeResourceListChanged, mcpclient.NoticePromptListChanged, mcpclient.NoticeConnected:
			r.kick()
		case mcpclient.NoticeResourceUpdated:
			for _, s := range r.mcpServers() {
				_ = s.ResourceUpdated(cx, n.Updated)
			}
		case mcpclient.NoticeLog:
			for _, s := range r.mcpServers() {
				for ss := range s.Sessions() {
					_ = ss.Log(cx, n.Log) //nolint:staticcheck // SEP-2577: server logs stay for peers on protocol versions that have them (2025-11-25)
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
					if cs := u.Session(); cs != nil && capsOf(cs).Logging != nil { //nolint:staticcheck // SEP-2577: server logs stay for peers on protocol versions that have them (2025-11-25)
						_ = cs.SetLoggingLevel(cx, &mcp.SetLoggingLevelParams{Level: "debug"}) //nolint:staticcheck // SEP-2577: server logs stay for peers on protocol versions that have them (2025-11-25)
					}
				}
			}
			return res, err
		}
	}
}
