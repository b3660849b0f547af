package mcpclient

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
)

// upstreams holds, per tree, every client's [Upstream] in its registration layer, under its
// serverName: what a gateway serving a scope can pass through.
var upstreams = ctx.NewTreeLayers[*Upstream]("mcpclient:upstream")

// Upstream is the live side of one MCP client as a gateway sees it: the server's current
// session (nil while not connected) and the notifications the server sends that are not
// the client's own business (resource and prompt list changes, resource updates, log
// messages, progress). It exists for as long as the client's scope is loaded, across
// reconnects: each connection is a new session, announced by the client's [StatusEvent].
//
// An Upstream is safe for concurrent use. Notice listeners run on the SDK's notification
// goroutine of the session: they must return quickly and must not make requests on the
// session.
type Upstream struct {
	s *supervisor

	mu        sync.Mutex
	listeners map[*func(Notice)]struct{}
}

// NoticeKind says what a [Notice] reports.
type NoticeKind string

// Notice kinds.
const (
	NoticeResourceListChanged NoticeKind = "resources/list_changed"
	NoticePromptListChanged   NoticeKind = "prompts/list_changed"
	NoticeResourceUpdated     NoticeKind = "resources/updated"
	NoticeLog                 NoticeKind = "message"
	NoticeProgress            NoticeKind = "progress"
	// NoticeConnected: the client has a new session with the server (its first, or one
	// after a reconnection, such as the one that declares newly offered capabilities),
	// whose resources and prompts may differ from the last session's.
	NoticeConnected NoticeKind = "connected"
)

// Notice is one notification from an upstream server. Exactly the field of its Kind is set
// (none for the list changes). A Notice is a plain value; its pointers are the SDK's and
// must not be modified.
type Notice struct {
	Server   string
	Kind     NoticeKind
	Updated  *mcp.ResourceUpdatedNotificationParams
	Log      *mcp.LoggingMessageParams //nolint:staticcheck // SEP-2577: server logs stay for peers on protocol versions that have them (2025-11-25)
	Progress *mcp.ProgressNotificationParams
}

// Server returns the client's serverName.
func (u *Upstream) Server() string { return u.s.cfg.ServerName }

// Scope returns the client plugin's scope (the instance, as in [Status.Scope]).
func (u *Upstream) Scope() *ctx.Scope { return u.s.c.Scope() }

// Instructions returns the server's instructions as it sent them in its initialize result
// (for a lazy server not started yet, as its catalog cache entry has them); "" before the
// first discovery or after the server's tools were withdrawn. Tool search ranks them with
// the server's tools.
func (u *Upstream) Instructions() string { return u.s.rawInstructions() }

// InstructionsOf returns the instructions of the MCP server called server as visible from
// c's scope ("" when there is no such client): see [Upstream.Instructions].
func InstructionsOf(c *ctx.Context, server string) string {
	if u, ok := LookupUpstream(c, server); ok {
		return u.Instructions()
	}
	return ""
}

// Session returns the live session, or nil while the client is not connected. The session
// is the client's: use it for requests (lists, reads, prompts, completions,
// subscriptions); never close it. Tool calls should go through the tool registry, so that
// its pipeline applies.
func (u *Upstream) Session() *mcp.ClientSession {
	if g := u.s.live.Load(); g != nil {
		return g.conn.Session()
	}
	return nil
}

// ReadResource sends resources/read for p on the live session on behalf of the caller of cx,
// as the client's own reads are sent: watched for toolCallTimeoutMs without progress (p's
// progress token, if any, is the one sent; else a fresh one), capped by maxToolCallMs, and
// in view when the server sends requests of its own meanwhile, so that they reach cx's
// caller ([WithOrigin], elicitation.WithResponder, sampling.WithSampler). p is not modified.
func (u *Upstream) ReadResource(cx context.Context, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	s := u.s
	g, release, err := s.liveGeneration(cx)
	if err != nil {
		return nil, err
	}
	defer release()
	pcx := cx
	cx, cancel := context.WithTimeout(cx, s.cfg.MaxToolCall())
	defer cancel()
	cx, done := g.bind(cx)
	defer done()
	res, err := s.readResource(cx, g, p)
	if err != nil && asIdle(err) == nil {
		return nil, s.callError(pcx, g, "resources/read", err)
	}
	return res, err
}

// Track puts the caller of cx in view, until done is called, for the server requests that
// arrive while a request made with cx on [Upstream.Session] is in flight (prompts/get,
// completion/complete, resources/subscribe): a gateway tracks every request it forwards, so
// that a server request is never attributed to another caller's call in flight. It adds no
// deadline.
func (u *Upstream) Track(cx context.Context) (done func()) {
	g := u.s.live.Load()
	if g == nil {
		return func() {}
	}
	return g.watch.addCaller(cx)
}

// Listen calls fn for every notice until the returned stop function is called (or the
// client unloads). See [Upstream] for what fn may do.
func (u *Upstream) Listen(fn func(Notice)) (stop func()) {
	p := &fn
	u.mu.Lock()
	u.listeners[p] = struct{}{}
	u.mu.Unlock()
	return func() {
		u.mu.Lock()
		delete(u.listeners, p)
		u.mu.Unlock()
	}
}

func (u *Upstream) notify(n Notice) {
	n.Server = u.Server()
	u.mu.Lock()
	fns := callbacks(u.listeners)
	u.mu.Unlock()
	for _, fn := range fns {
		fn(n)
	}
}

// clientOptions adds the notice handlers to the options of every session the client opens.
func (u *Upstream) clientOptions(co *mcp.ClientOptions) {
	co.ResourceListChangedHandler = func(context.Context, *mcp.ResourceListChangedRequest) {
		u.notify(Notice{Kind: NoticeResourceListChanged})
		u.s.catalogChanged()
	}
	co.PromptListChangedHandler = func(context.Context, *mcp.PromptListChangedRequest) {
		u.notify(Notice{Kind: NoticePromptListChanged})
		u.s.catalogChanged()
	}
	co.ResourceUpdatedHandler = func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
		u.notify(Notice{Kind: NoticeResourceUpdated, Updated: r.Params})
	}
	co.LoggingMessageHandler = func(_ context.Context, r *mcp.LoggingMessageRequest) { //nolint:staticcheck // SEP-2577: server logs stay for peers on protocol versions that have them (2025-11-25)
		u.notify(Notice{Kind: NoticeLog, Log: r.Params})
	}
	co.ProgressNotificationHandler = func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		u.notify(Notice{Kind: NoticeProgress, Progress: r.Params})
	}
}

// publishUpstream makes s's Upstream visible in c's registration layer (as an effect of c)
// and installs its notice handlers on s's sessions. It runs before the supervisor starts.
func publishUpstream(c *ctx.Context, s *supervisor) error {
	u := &Upstream{s: s, listeners: map[*func(Notice)]struct{}{}}
	s.upstream = u
	prev := s.opts.clientOptions
	s.opts.clientOptions = func(co *mcp.ClientOptions) {
		if prev != nil {
			prev(co)
		}
		u.clientOptions(co)
	}
	_, err := upstreams.In(c).Add(c, s.cfg.ServerName, u, nil)
	return err
}

// Upstreams returns the upstreams visible from c's scope, sorted by server name: for each
// name, the client of the nearest registration layer (the same rule as tools).
func Upstreams(c *ctx.Context) []*Upstream {
	es := upstreams.In(c).Visible(c.Scope())
	out := make([]*Upstream, len(es))
	for i, e := range es {
		out[i] = e.Value
	}
	return out
}

// LookupUpstream returns the upstream called server as visible from c's scope.
func LookupUpstream(c *ctx.Context, server string) (*Upstream, bool) {
	e, ok := upstreams.In(c).Get(c.Scope(), server)
	if !ok {
		return nil, false
	}
	return e.Value, true
}

// callMetaKey carries the _meta of a tools/call made through the registry.
type callMetaKey struct{}

// WithCallMeta returns a context whose tool calls to MCP servers carry meta as the request's
// _meta (a progress token, say). A gateway passes it to toolregistry.Registry.Execute.
func WithCallMeta(pcx context.Context, meta mcp.Meta) context.Context {
	if len(meta) == 0 {
		return pcx
	}
	return context.WithValue(pcx, callMetaKey{}, meta)
}

// callMeta returns the _meta set by WithCallMeta, or nil.
func callMeta(cx context.Context) mcp.Meta {
	m, _ := cx.Value(callMetaKey{}).(mcp.Meta)
	return m
}
