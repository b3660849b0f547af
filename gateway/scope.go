package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// scopeRoute serves what one scope sees: the registry's tools under their public names,
// executed through the registry, and the resources, templates and prompts of the MCP servers
// visible from the scope (resources under their own URIs, prompts as mcp__<server>__<name>).
type scopeRoute struct {
	g    *Gateway
	name string // "" for the aggregated route, else the agent layer
	sc   *ctx.Context
	srv  *mcp.Server
	worker

	syncMu    sync.Mutex // one sync at a time
	mu        sync.Mutex
	tools     map[string]string              // name shown → fingerprint
	aliases   map[string]string              // name shown → the registry's (Options.ShortNames)
	resources map[string]string              // uri → server
	templates map[string]string              // uri template → server
	prompts   map[string]promptRef           // public name → server and raw name
	printed   map[string]string              // "r:"+uri, "t:"+tmpl, "p:"+name → fingerprint
	servers   map[string]*mcpclient.Upstream // servers this route shows
}

type promptRef struct{ server, raw string }

func (g *Gateway) newScopeRoute(name string, sc *ctx.Context) *scopeRoute {
	r := &scopeRoute{g: g, name: name, sc: sc,
		tools: map[string]string{}, resources: map[string]string{}, templates: map[string]string{},
		prompts: map[string]promptRef{}, printed: map[string]string{}, servers: map[string]*mcpclient.Upstream{}}
	impl := g.opts.Implementation
	if impl == nil {
		impl = &mcp.Implementation{Name: "harness-gateway", Version: "1"}
	}
	r.srv = mcp.NewServer(impl, &mcp.ServerOptions{
		Logger: g.log,
		Capabilities: &mcp.ServerCapabilities{
			Tools:       &mcp.ToolCapabilities{ListChanged: true},
			Resources:   &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			Prompts:     &mcp.PromptCapabilities{ListChanged: true},
			Logging:     &mcp.LoggingCapabilities{}, //nolint:staticcheck // SEP-2577: server logs stay for peers on protocol versions that have them (2025-11-25)
			Completions: &mcp.CompletionCapabilities{},
		},
		CompletionHandler:  r.complete,
		SubscribeHandler:   r.subscribe,
		UnsubscribeHandler: r.unsubscribe,
	})
	path := PathAggregated
	if name != "" {
		path = PathAgents + name
	}
	r.srv.AddReceivingMiddleware(g.inFlight(path))
	r.srv.AddSendingMiddleware(keepAnswers)
	r.srv.AddReceivingMiddleware(levelForwarder(func() []*mcpclient.Upstream {
		r.mu.Lock()
		defer r.mu.Unlock()
		out := make([]*mcpclient.Upstream, 0, len(r.servers))
		for _, u := range r.servers {
			out = append(out, u)
		}
		return out
	}))
	g.tasks.Serve(r.srv)
	label := "aggregated"
	if name != "" {
		label = "agent:" + name
	}
	r.worker = g.newWorker(label, r.sync)
	return r
}

func (r *scopeRoute) mcpServer() *mcp.Server { return r.srv }

func (r *scopeRoute) mcpServers() []*mcp.Server { return []*mcp.Server{r.srv} }

func (r *scopeRoute) serves(server string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.servers[server]
	return ok
}

// sync brings the server's tools, resources, templates and prompts in line with the scope.
func (r *scopeRoute) sync(cx context.Context) {
	r.syncMu.Lock()
	defer r.syncMu.Unlock()
	r.syncTools()
	r.syncUpstreams(cx)
}

func (r *scopeRoute) syncTools() {
	infos := slices.DeleteFunc(r.g.reg.List(r.sc), func(in toolregistry.Info) bool { return !offered(in) })
	var aliases map[string]string
	if r.g.opts.ShortNames {
		infos, aliases = shortNames(infos)
	}
	r.mu.Lock()
	r.aliases = aliases
	r.mu.Unlock()
	syncShownTools(r.srv, &r.mu, r.tools, infos, r.callTool)
}

// syncShownTools makes srv show infos, each called through h: a tool whose definition
// changed is replaced, one no longer in infos removed. shown (guarded by mu) holds what srv
// shows, name → fingerprint.
func syncShownTools(srv *mcp.Server, mu *sync.Mutex, shown map[string]string, infos []toolregistry.Info, h mcp.ToolHandler) {
	seen := make(map[string]bool, len(infos))
	for _, in := range infos {
		seen[in.Name] = true
		fp := in.Description + "\x00" + string(in.Parameters) + "\x00" + string(in.OutputSchema)
		mu.Lock()
		same := shown[in.Name] == fp
		shown[in.Name] = fp
		mu.Unlock()
		if same {
			continue
		}
		srv.AddTool(toolOf(in), h)
	}
	var gone []string
	mu.Lock()
	for name := range shown {
		if !seen[name] {
			gone = append(gone, name)
			delete(shown, name)
		}
	}
	mu.Unlock()
	if len(gone) > 0 {
		srv.RemoveTools(gone...)
	}
}

// toolOf describes a registry tool to MCP clients, with the annotations its server gave it.
func toolOf(in toolregistry.Info) *mcp.Tool {
	t := &mcp.Tool{Name: in.Name, Description: in.Description, InputSchema: json.RawMessage(in.Parameters),
		Title: in.Meta["title"], Annotations: annotationsOf(in.Meta)}
	if len(in.OutputSchema) > 0 {
		t.OutputSchema = json.RawMessage(in.OutputSchema)
	}
	// An MCP App's view (_meta.ui: its ui:// resource, which the route serves under its
	// own URI) passes as the server sent it, for clients that render apps.
	if ui := in.Meta[mcpclient.MetaUI]; ui != "" {
		var m mcp.Meta
		if json.Unmarshal([]byte(ui), &m) == nil {
			t.Meta = m
		}
	}
	// A tool its server runs as a task is listed so (execution, mcpclient.TaskServer).
	mcpclient.MarkTaskSupport(t, in.Meta["taskSupport"])
	return t
}

// annotationsOf turns the hints an MCP client keeps in a tool's metadata ("readOnlyHint":
// "true", …) back into MCP annotations, so that a client of the gateway sees what the
// upstream server said of its tool and can decide as the harness's agent does; nil when the
// server gave none.
func annotationsOf(meta map[string]string) *mcp.ToolAnnotations {
	hint := func(k string) (bool, bool) {
		v, ok := meta[k]
		return v == "true", ok
	}
	ro, hasRO := hint("readOnlyHint")
	idem, hasIdem := hint("idempotentHint")
	destr, hasDestr := hint("destructiveHint")
	open, hasOpen := hint("openWorldHint")
	if !hasRO && !hasIdem && !hasDestr && !hasOpen {
		return nil
	}
	a := &mcp.ToolAnnotations{ReadOnlyHint: ro, IdempotentHint: idem}
	if hasDestr {
		a.DestructiveHint = &destr
	}
	if hasOpen {
		a.OpenWorldHint = &open
	}
	return a
}

func (r *scopeRoute) callTool(cx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	public := req.Params.Name
	r.mu.Lock()
	if name, ok := r.aliases[public]; ok {
		public = name
	}
	r.mu.Unlock()
	return r.g.execute(cx, r.sc, req.Session, req.Params, public)
}

// execute runs the registry tool public for a downstream call through the pipeline, with
// the call's progress token forwarded, and turns its result into MCP's.
func (g *Gateway) execute(cx context.Context, caller *ctx.Context, ss *mcp.ServerSession, p *mcp.CallToolParamsRaw, public string) (*mcp.CallToolResult, error) {
	if inRounds(ss) {
		return g.executeInRounds(cx, caller, ss, p, public)
	}
	meta, forget := g.progressMeta(ss, p.GetProgressToken())
	defer forget()
	cx, end := g.forCaller(cx, ss)
	defer end()
	res, err := g.callTool(mcpclient.WithCallMeta(cx, meta), caller, public, p.Arguments)
	return g.result(res, err), nil
}

// syncUpstreams re-lists the resources, templates and prompts of the visible servers.
func (r *scopeRoute) syncUpstreams(cx context.Context) {
	ups := mcpclient.Upstreams(r.sc)
	servers := map[string]*mcpclient.Upstream{}
	want := map[string]string{} // printed key → fingerprint
	resources := map[string]string{}
	templates := map[string]string{}
	prompts := map[string]promptRef{}
	var addRes []served[*mcp.Resource]
	var addTmpl []served[*mcp.ResourceTemplate]
	var addPrompt []*mcp.Prompt
	for _, u := range ups {
		servers[u.Server()] = u
		r.g.listen(u)
		cs := u.Session()
		if cs == nil {
			continue
		}
		caps := capsOf(cs)
		name := u.Server()
		if caps.Resources != nil {
			for res, err := range cs.Resources(cx, nil) {
				if err != nil {
					r.g.log.Warn("resources/list failed", "server", name, "err", err)
					break
				}
				if _, dup := resources[res.URI]; dup {
					continue // the first server (by name) keeps the URI
				}
				resources[res.URI] = name
				if fp := name + fingerprint(res); r.fresh("r:"+res.URI, fp, want) {
					addRes = append(addRes, served[*mcp.Resource]{name, res})
				}
			}
			for t, err := range cs.ResourceTemplates(cx, nil) {
				if err != nil {
					r.g.log.Warn("resources/templates/list failed", "server", name, "err", err)
					break
				}
				if _, dup := templates[t.URITemplate]; dup {
					continue
				}
				templates[t.URITemplate] = name
				if fp := name + fingerprint(t); r.fresh("t:"+t.URITemplate, fp, want) {
					addTmpl = append(addTmpl, served[*mcp.ResourceTemplate]{name, t})
				}
			}
		}
		if caps.Prompts != nil {
			for p, err := range cs.Prompts(cx, nil) {
				if err != nil {
					r.g.log.Warn("prompts/list failed", "server", name, "err", err)
					break
				}
				public := mcpclient.PublicToolName(name, p.Name)
				prompts[public] = promptRef{server: name, raw: p.Name}
				cp := *p
				cp.Name = public
				if fp := fingerprint(&cp); r.fresh("p:"+public, fp, want) {
					addPrompt = append(addPrompt, &cp)
				}
			}
		}
	}
	r.mu.Lock()
	r.servers, r.resources, r.templates, r.prompts = servers, resources, templates, prompts
	var goneRes, goneTmpl, gonePrompt []string
	for k := range r.printed {
		if _, ok := want[k]; ok {
			continue
		}
		delete(r.printed, k)
		switch k[0] {
		case 'r':
			goneRes = append(goneRes, k[2:])
		case 't':
			goneTmpl = append(goneTmpl, k[2:])
		case 'p':
			gonePrompt = append(gonePrompt, k[2:])
		}
	}
	for k, fp := range want {
		r.printed[k] = fp
	}
	r.mu.Unlock()
	for _, a := range addRes {
		r.srv.AddResource(a.v, r.reader(a.server))
	}
	for _, a := range addTmpl {
		r.srv.AddResourceTemplate(a.v, r.reader(a.server))
	}
	for _, p := range addPrompt {
		r.srv.AddPrompt(p, r.getPrompt)
	}
	if len(goneRes) > 0 {
		r.srv.RemoveResources(goneRes...)
	}
	if len(goneTmpl) > 0 {
		r.srv.RemoveResourceTemplates(goneTmpl...)
	}
	if len(gonePrompt) > 0 {
		r.srv.RemovePrompts(gonePrompt...)
	}
}

// fresh records key's fingerprint in want and reports whether it differs from what the
// server already shows.
func (r *scopeRoute) fresh(key, fp string, want map[string]string) bool {
	want[key] = fp
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.printed[key] != fp
}

func fingerprint(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func capsOf(cs *mcp.ClientSession) *mcp.ServerCapabilities {
	if ir := cs.InitializeResult(); ir != nil && ir.Capabilities != nil {
		return ir.Capabilities
	}
	return &mcp.ServerCapabilities{}
}

// live returns the upstream of server as this route sees it and its live session.
func (r *scopeRoute) live(server string) (*mcpclient.Upstream, *mcp.ClientSession, error) {
	r.mu.Lock()
	u := r.servers[server]
	r.mu.Unlock()
	if u == nil {
		return nil, nil, fmt.Errorf("%w: MCP server %q", ErrUnknownRoute, server)
	}
	cs := u.Session()
	if cs == nil {
		return nil, nil, fmt.Errorf("%w: MCP server %q is not connected", ErrNotConnected, server)
	}
	return u, cs, nil
}

// invalidParams is err as a JSON-RPC error with the invalid-params code (-32602), still
// matching what err matches.
func invalidParams(err error) error {
	return fmt.Errorf("%w%w", err, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams})
}

// served is an item to show and the server that serves it.
type served[T any] struct {
	server string
	v      T
}

// reader returns the read handler of the resources and templates of server (the SDK has
// matched the URI to the resource or template).
func (r *scopeRoute) reader(server string) mcp.ResourceHandler {
	return func(cx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		u, _, err := r.live(server)
		if err != nil {
			return nil, err
		}
		return r.g.read(cx, u, req)
	}
}

func (r *scopeRoute) getPrompt(cx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	r.mu.Lock()
	ref, ok := r.prompts[req.Params.Name]
	r.mu.Unlock()
	if !ok {
		return nil, invalidParams(fmt.Errorf("%w: prompt %q", ErrUnknownRoute, req.Params.Name))
	}
	u, cs, err := r.live(ref.server)
	if err != nil {
		return nil, err
	}
	if inRounds(req.Session) {
		return r.g.promptInRounds(cx, u, cs, req, ref.raw)
	}
	p := *req.Params
	p.Name = ref.raw
	cx, done := r.g.track(cx, req.Session, u)
	defer done()
	return cs.GetPrompt(cx, &p)
}

func (r *scopeRoute) complete(cx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := *req.Params
	if p.Ref == nil {
		return nil, invalidParams(errors.New("gateway: completion/complete without a ref"))
	}
	ref := *p.Ref
	var server string
	r.mu.Lock()
	switch ref.Type {
	case "ref/prompt":
		pr, ok := r.prompts[ref.Name]
		server, ref.Name = pr.server, pr.raw
		if !ok {
			server = ""
		}
	case "ref/resource":
		if s, ok := r.templates[ref.URI]; ok {
			server = s
		} else {
			server = r.resources[ref.URI]
		}
	}
	r.mu.Unlock()
	if server == "" {
		what := fmt.Sprintf("%s %q", ref.Type, p.Ref.Name)
		if ref.Type != "ref/prompt" {
			what = fmt.Sprintf("%s %q", ref.Type, p.Ref.URI)
		}
		return nil, invalidParams(fmt.Errorf("%w: completion/complete: no %s on this route", ErrUnknownRoute, what))
	}
	u, cs, err := r.live(server)
	if err != nil {
		return nil, err
	}
	p.Ref = &ref
	cx, done := r.g.track(cx, req.Session, u)
	defer done()
	return cs.Complete(cx, &p)
}

// subscribe takes the downstream session's reference to the subscription of the server
// that serves uri on this route.
func (r *scopeRoute) subscribe(cx context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	r.mu.Lock()
	server, ok := r.resources[uri]
	r.mu.Unlock()
	if !ok {
		return mcp.ResourceNotFoundError(uri)
	}
	u, _, err := r.live(server)
	if err != nil {
		return err
	}
	return r.g.subs.subscribe(cx, req.Session, u, uri)
}

// unsubscribe releases the downstream session's reference.
func (r *scopeRoute) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	return r.g.subs.unsubscribe(req.Session, req.Params.URI)
}
