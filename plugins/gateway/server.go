package gateway

import (
	"context"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient"
)

// serverRoute passes one upstream server through: its tools under their original names
// (with their titles, annotations and schemas as the server lists them, the ones the client
// registered), executed through the tool registry; its resources, templates and prompts
// under their own names; completions and subscriptions forwarded. The route's mcp.Server is
// built once the server has connected, with the server's identity, instructions and
// capabilities.
type serverRoute struct {
	g     *Gateway
	name  string
	up    *mcpclient.Upstream
	kicks chan struct{}

	syncMu  sync.Mutex // one sync at a time
	mu      sync.Mutex
	srv     *mcp.Server
	printed map[string]string // "x:"+name → fingerprint, x in tool, resource, template, prompt
}

func (g *Gateway) newServerRoute(name string, u *mcpclient.Upstream) *serverRoute {
	r := &serverRoute{g: g, name: name, up: u, kicks: make(chan struct{}, 1), printed: map[string]string{}}
	g.worker("server:"+name, r.kicks, r.sync)
	return r
}

func (r *serverRoute) mcpServer() *mcp.Server {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.srv
}

func (r *serverRoute) kick() {
	select {
	case r.kicks <- struct{}{}:
	default:
	}
}

func (r *serverRoute) serves(server string) bool { return server == r.name }

// build makes the route's server from the live session, once; then syncs it.
func (r *serverRoute) build() (*mcp.Server, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.srv != nil {
		return r.srv, nil
	}
	cs := r.up.Session()
	if cs == nil {
		return nil, fmt.Errorf("%w: MCP server %q has not connected yet", ErrNotConnected, r.name)
	}
	ir := cs.InitializeResult()
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
	if up.Logging != nil {
		caps.Logging = &mcp.LoggingCapabilities{}
	}
	if up.Completions != nil {
		caps.Completions = &mcp.CompletionCapabilities{}
		opts.CompletionHandler = r.complete
	}
	r.srv = mcp.NewServer(impl, opts)
	r.srv.AddReceivingMiddleware(levelForwarder(func() []*mcpclient.Upstream { return []*mcpclient.Upstream{r.up} }))
	return r.srv, nil
}

// caller is the context tool calls are made from: the client's own scope, which sees the
// client's tools whatever layer it registered them in.
func (r *serverRoute) caller() *ctx.Context { return r.up.Scope().Context() }

// sync brings the route's server in line with the upstream: everything it lists while it
// is connected, nothing while it is not (a tool is never listed without a live route).
func (r *serverRoute) sync(cx context.Context) {
	r.syncMu.Lock()
	defer r.syncMu.Unlock()
	srv := r.mcpServer()
	if srv == nil {
		return
	}
	r.g.listen(r.up)
	cs := r.up.Session()
	want := map[string]string{}
	type add struct {
		key string
		fn  func()
	}
	var adds []add
	fresh := func(key string, v any, fn func()) {
		fp := fingerprint(v)
		want[key] = fp
		r.mu.Lock()
		same := r.printed[key] == fp
		r.mu.Unlock()
		if !same {
			adds = append(adds, add{key, fn})
		}
	}
	if cs != nil {
		caps := capsOf(cs)
		caller := r.caller()
		if caps.Tools != nil {
			// The registry's tools of this server, by raw name: only those have a route.
			public := map[string]string{}
			for _, in := range r.g.reg.List(caller) {
				if in.Meta["server"] == r.name && in.Meta["mcpTool"] != "" {
					public[in.Meta["mcpTool"]] = in.Name
				}
			}
			for t, err := range cs.Tools(cx, nil) {
				if err != nil {
					r.g.log.Warn("tools/list failed", "server", r.name, "err", err)
					return // keep what is shown; the next change retries
				}
				pub, ok := public[t.Name]
				if !ok {
					continue
				}
				fresh("tool:"+t.Name, []any{t, pub}, func() {
					srv.AddTool(t, func(cx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
						return r.g.execute(cx, r.caller(), req.Session, req.Params, pub)
					})
				})
			}
		}
		if caps.Resources != nil {
			for res, err := range cs.Resources(cx, nil) {
				if err != nil {
					r.g.log.Warn("resources/list failed", "server", r.name, "err", err)
					break
				}
				fresh("resource:"+res.URI, res, func() { srv.AddResource(res, r.read) })
			}
			for t, err := range cs.ResourceTemplates(cx, nil) {
				if err != nil {
					r.g.log.Warn("resources/templates/list failed", "server", r.name, "err", err)
					break
				}
				fresh("template:"+t.URITemplate, t, func() { srv.AddResourceTemplate(t, r.read) })
			}
		}
		if caps.Prompts != nil {
			for p, err := range cs.Prompts(cx, nil) {
				if err != nil {
					r.g.log.Warn("prompts/list failed", "server", r.name, "err", err)
					break
				}
				fresh("prompt:"+p.Name, p, func() { srv.AddPrompt(p, r.prompt) })
			}
		}
	}
	gone := map[string][]string{}
	r.mu.Lock()
	for k := range r.printed {
		if _, ok := want[k]; !ok {
			delete(r.printed, k)
			kind, name := splitKey(k)
			gone[kind] = append(gone[kind], name)
		}
	}
	for k, fp := range want {
		r.printed[k] = fp
	}
	r.mu.Unlock()
	for _, a := range adds {
		a.fn()
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
