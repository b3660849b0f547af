package gateway

import (
	"context"
	"fmt"
	"iter"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient"
)

// serverRoute passes one upstream server through: its tools under their original names
// (with their titles, annotations and schemas as the server lists them, the ones the client
// registered), executed through the tool registry; its resources, templates and prompts
// under their own names; completions and subscriptions forwarded. The route's mcp.Server is
// built from the upstream's initialize answer once the server has connected: its identity,
// instructions and capabilities. A connection that answers differently (a reconnect to an
// upgraded server) makes a new mcp.Server, which new downstream sessions get; sessions of
// an older one keep what they initialized with (MCP cannot change a session's capabilities)
// and keep their lists in sync, until they end.
type serverRoute struct {
	g    *Gateway
	name string
	up   *mcpclient.Upstream
	worker

	syncMu sync.Mutex // one sync at a time
	mu     sync.Mutex
	cur    *routeServer   // the server new sessions get; nil until the upstream connected
	old    []*routeServer // servers built from earlier answers, while they have sessions
}

// routeServer is one mcp.Server of a per-server route, built from one initialize answer.
type routeServer struct {
	srv     *mcp.Server
	answer  string                  // fingerprint of the serverInfo, instructions and capabilities
	caps    *mcp.ServerCapabilities // the upstream's, as built from
	printed map[string]string       // "x:"+name → fingerprint, x in tool, resource, template, prompt; guarded by serverRoute.mu
	synced  bool                    // the upstream's lists were applied once; guarded by serverRoute.mu
}

func (g *Gateway) newServerRoute(name string, u *mcpclient.Upstream) *serverRoute {
	r := &serverRoute{g: g, name: name, up: u}
	r.worker = g.newWorker("server:"+name, r.sync)
	return r
}

// synced reports whether srv, a server of the route, shows the upstream's lists yet.
func (r *serverRoute) synced(srv *mcp.Server) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range r.instancesLocked() {
		if rs.srv == srv {
			return rs.synced
		}
	}
	return false
}

// mcpServer returns the server new sessions get (nil until the upstream connected).
func (r *serverRoute) mcpServer() *mcp.Server {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == nil {
		return nil
	}
	return r.cur.srv
}

// mcpServers returns every server of the route that may have sessions.
func (r *serverRoute) mcpServers() []*mcp.Server {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*mcp.Server
	for _, rs := range r.instancesLocked() {
		out = append(out, rs.srv)
	}
	return out
}

func (r *serverRoute) instancesLocked() []*routeServer {
	if r.cur == nil {
		return nil
	}
	return append([]*routeServer{r.cur}, r.old...)
}

func (r *serverRoute) serves(server string) bool { return server == r.name }

// build makes the route's server from the live session's initialize answer, unless the
// current one was built from the same answer; the server it replaces stays (old) while it
// has sessions.
func (r *serverRoute) build() (*mcp.Server, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cs := r.up.Session()
	if cs == nil {
		if r.cur != nil {
			return r.cur.srv, nil // the lists say what is reachable meanwhile
		}
		return nil, fmt.Errorf("%w: MCP server %q has not connected yet", ErrNotConnected, r.name)
	}
	ir := cs.InitializeResult()
	answer := "{}"
	if ir != nil {
		answer = fingerprint([]any{ir.ServerInfo, ir.Instructions, ir.Capabilities})
	}
	if r.cur != nil && r.cur.answer == answer {
		return r.cur.srv, nil
	}
	rs := r.newRouteServer(ir)
	rs.answer = answer
	if r.cur != nil {
		r.old = append(r.old, r.cur)
		r.g.log.Info("the upstream's identity or capabilities changed: new sessions of the per-server route get the new ones", "server", r.name)
	}
	r.cur = rs
	return rs.srv, nil
}

// newRouteServer makes an mcp.Server from an upstream's initialize answer (nil: none known).
func (r *serverRoute) newRouteServer(ir *mcp.InitializeResult) *routeServer {
	impl := &mcp.Implementation{Name: r.name, Version: "0"}
	var instructions string
	up := &mcp.ServerCapabilities{}
	if ir != nil {
		if ir.ServerInfo != nil {
			c := *ir.ServerInfo
			impl = &c
		}
		instructions = ir.Instructions
		if ir.Capabilities != nil {
			up = ir.Capabilities
		}
	}
	caps := &mcp.ServerCapabilities{Experimental: up.Experimental}
	opts := &mcp.ServerOptions{Instructions: instructions, Logger: r.g.log, Capabilities: caps}
	if up.Tools != nil {
		caps.Tools = &mcp.ToolCapabilities{ListChanged: true}
	}
	if up.Resources != nil {
		caps.Resources = &mcp.ResourceCapabilities{ListChanged: true, Subscribe: up.Resources.Subscribe}
		if up.Resources.Subscribe {
			opts.SubscribeHandler = r.subscribe
			opts.UnsubscribeHandler = r.unsubscribe
		}
	}
	if up.Prompts != nil {
		caps.Prompts = &mcp.PromptCapabilities{ListChanged: true}
	}
	if up.Logging != nil { //nolint:staticcheck // SEP-2577: server logs stay for peers on protocol versions that have them (2025-11-25)
		caps.Logging = &mcp.LoggingCapabilities{} //nolint:staticcheck // SEP-2577: server logs stay for peers on protocol versions that have them (2025-11-25)
	}
	if up.Completions != nil {
		caps.Completions = &mcp.CompletionCapabilities{}
		opts.CompletionHandler = r.complete
	}
	srv := mcp.NewServer(impl, opts)
	srv.AddReceivingMiddleware(r.g.inFlight(PathServers + r.name))
	srv.AddSendingMiddleware(keepAnswers)
	srv.AddReceivingMiddleware(levelForwarder(func() []*mcpclient.Upstream { return []*mcpclient.Upstream{r.up} }))
	r.g.tasks.Serve(srv)
	return &routeServer{srv: srv, caps: up, printed: map[string]string{}}
}

// caller is the context tool calls are made from: the client's own scope, which sees the
// client's tools whatever layer it registered them in.
func (r *serverRoute) caller() *ctx.Context { return r.up.Scope().Context() }

// listed is one thing a route's servers show: its key ("x:"+name), its fingerprint and how
// to add it to a server.
type listed struct {
	key, fp string
	add     func(*mcp.Server)
}

// sync brings the route's servers in line with the upstream: everything it lists while it
// is connected, nothing while it is not (a tool is never listed without a live route). A
// server built from an earlier initialize answer shows only what its capabilities cover, and
// goes once its last session has.
func (r *serverRoute) sync(cx context.Context) {
	r.syncMu.Lock()
	defer r.syncMu.Unlock()
	if r.mcpServer() == nil {
		return
	}
	if _, err := r.build(); err != nil {
		return
	}
	r.g.listen(r.up)
	items, ok := r.list(cx)
	if !ok {
		return // keep what is shown; the next change retries
	}
	r.mu.Lock()
	var keep []*routeServer
	for _, rs := range r.old {
		if hasSessions(rs.srv) {
			keep = append(keep, rs)
		}
	}
	r.old = keep
	instances := r.instancesLocked()
	r.mu.Unlock()
	for _, rs := range instances {
		r.apply(rs, items)
	}
}

func hasSessions(s *mcp.Server) bool {
	for range s.Sessions() {
		return true
	}
	return false
}

// list returns what the upstream lists now (nothing while it is not connected); false when
// its tool list failed.
func (r *serverRoute) list(cx context.Context) ([]listed, bool) {
	cs := r.up.Session()
	if cs == nil {
		return nil, true
	}
	var items []listed
	item := func(key string, v any, add func(*mcp.Server)) {
		items = append(items, listed{key: key, fp: fingerprint(v), add: add})
	}
	caps := capsOf(cs)
	if caps.Tools != nil {
		// The registry's tools of this server, by raw name: only those have a route.
		public := map[string]string{}
		for _, in := range r.g.reg.List(r.caller()) {
			if in.Meta["server"] == r.name && in.Meta["mcpTool"] != "" {
				public[in.Meta["mcpTool"]] = in.Name
			}
		}
		for t, err := range cs.Tools(cx, nil) {
			if err != nil {
				r.g.log.Warn("tools/list failed", "server", r.name, "err", err)
				return nil, false
			}
			pub, ok := public[t.Name]
			if !ok {
				continue
			}
			item("tool:"+t.Name, []any{t, pub}, func(srv *mcp.Server) {
				srv.AddTool(t, func(cx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return r.g.execute(cx, r.caller(), req.Session, req.Params, pub)
				})
			})
		}
	}
	if caps.Resources != nil {
		eachListed(r, "resources/list", cs.Resources(cx, nil), func(res *mcp.Resource) {
			item("resource:"+res.URI, res, func(srv *mcp.Server) { srv.AddResource(res, r.read) })
		})
		eachListed(r, "resources/templates/list", cs.ResourceTemplates(cx, nil), func(t *mcp.ResourceTemplate) {
			item("template:"+t.URITemplate, t, func(srv *mcp.Server) { srv.AddResourceTemplate(t, r.read) })
		})
	}
	if caps.Prompts != nil {
		eachListed(r, "prompts/list", cs.Prompts(cx, nil), func(p *mcp.Prompt) {
			item("prompt:"+p.Name, p, func(srv *mcp.Server) { srv.AddPrompt(p, r.prompt) })
		})
	}
	return items, true
}

// eachListed calls add with each item of list, one of the upstream's lists (method); a
// failure is logged and ends the list, whose items so far stay.
func eachListed[T any](r *serverRoute, method string, list iter.Seq2[T, error], add func(T)) {
	for v, err := range list {
		if err != nil {
			r.g.log.Warn(method+" failed", "server", r.name, "err", err)
			return
		}
		add(v)
	}
}

// apply makes rs show items, those its capabilities cover: it adds what is new or changed
// and removes what is gone.
func (r *serverRoute) apply(rs *routeServer, items []listed) {
	srv := rs.srv
	want := map[string]string{}
	var adds []func(*mcp.Server)
	r.mu.Lock()
	for _, it := range items {
		kind, _ := splitKey(it.key)
		if !covers(rs.caps, kind) {
			continue
		}
		want[it.key] = it.fp
		if rs.printed[it.key] != it.fp {
			adds = append(adds, it.add)
		}
	}
	gone := map[string][]string{}
	for k := range rs.printed {
		if _, ok := want[k]; !ok {
			delete(rs.printed, k)
			kind, name := splitKey(k)
			gone[kind] = append(gone[kind], name)
		}
	}
	for k, fp := range want {
		rs.printed[k] = fp
	}
	rs.synced = true
	r.mu.Unlock()
	for _, add := range adds {
		add(srv)
	}
	if len(gone["tool"]) > 0 {
		srv.RemoveTools(gone["tool"]...)
	}
	if len(gone["resource"]) > 0 {
		srv.RemoveResources(gone["resource"]...)
	}
	if len(gone["template"]) > 0 {
		srv.RemoveResourceTemplates(gone["template"]...)
	}
	if len(gone["prompt"]) > 0 {
		srv.RemovePrompts(gone["prompt"]...)
	}
}

// covers reports whether capabilities caps announce things of kind (tool, resource,
// template, prompt).
func covers(caps *mcp.ServerCapabilities, kind string) bool {
	switch kind {
	case "tool":
		return caps.Tools != nil
	case "resource", "template":
		return caps.Resources != nil
	case "prompt":
		return caps.Prompts != nil
	}
	return false
}

func splitKey(k string) (kind, name string) {
	for i := 0; i < len(k); i++ {
		if k[i] == ':' {
			return k[:i], k[i+1:]
		}
	}
	return k, ""
}

func (r *serverRoute) session() (*mcp.ClientSession, error) {
	cs := r.up.Session()
	if cs == nil {
		return nil, fmt.Errorf("%w: MCP server %q is not connected", ErrNotConnected, r.name)
	}
	return cs, nil
}

func (r *serverRoute) read(cx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	if _, err := r.session(); err != nil {
		return nil, err
	}
	return r.g.read(cx, r.up, req)
}

func (r *serverRoute) prompt(cx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	cs, err := r.session()
	if err != nil {
		return nil, err
	}
	if inRounds(req.Session) {
		return r.g.promptInRounds(cx, r.up, cs, req, req.Params.Name)
	}
	cx, done := r.g.track(cx, req.Session, r.up)
	defer done()
	return cs.GetPrompt(cx, req.Params)
}

func (r *serverRoute) complete(cx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	cs, err := r.session()
	if err != nil {
		return nil, err
	}
	cx, done := r.g.track(cx, req.Session, r.up)
	defer done()
	return cs.Complete(cx, req.Params)
}

// subscribe takes the downstream session's reference to the server's subscription of the
// URI; unsubscribe releases it.
func (r *serverRoute) subscribe(cx context.Context, req *mcp.SubscribeRequest) error {
	return r.g.subs.subscribe(cx, req.Session, r.up, req.Params.URI)
}

func (r *serverRoute) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	return r.g.subs.unsubscribe(req.Session, req.Params.URI)
}
