package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/elicitation"
	"github.com/cordisgo/harness/sampling"
)

// originKey carries the identity of whoever made a call (WithOrigin).
type originKey struct{}

// WithOrigin returns a context for tool calls and resource reads made on behalf of origin (a
// gateway's downstream session, say; any comparable value that identifies it). A server may
// send requests of its own while a call is in flight (elicitation, sampling, roots/list), and
// MCP does not say which call caused them: the client passes the caller's context to the
// elicitation responders and the sampler ([elicitation.Request].Call) when exactly one
// request is in flight, or when every request in flight has the same origin. Otherwise the
// request is not attributed to any call (Call is nil), so it can never reach another
// caller's surface.
func WithOrigin(pcx context.Context, origin any) context.Context {
	return context.WithValue(pcx, originKey{}, origin)
}

// cause returns the context of the call that caused a server request on g, or nil when it
// cannot be told.
func (g *generation) cause() context.Context {
	callers := g.watch.callers()
	if len(callers) == 0 {
		return nil
	}
	first := callers[0]
	if len(callers) == 1 {
		return first
	}
	o := first.Value(originKey{})
	if o == nil {
		return nil
	}
	for _, cx := range callers[1:] {
		if cx.Value(originKey{}) != o {
			return nil
		}
	}
	return first
}

// callOf returns the context of the call that caused a server request handled with cx
// (meta: the request's _meta), exactly when it can be told: the call it was attributed to
// when it arrived, for a request run later as a task (withCause); the call that created the
// task the request relates to (the related-task _meta); cx itself when it is a call's own
// context, which is how the SDK fulfils the input requests of a server on 2026-07-28
// (SEP-2322). Otherwise what cause finds.
func (g *generation) callOf(cx context.Context, meta mcp.Meta) context.Context {
	if c, ok := cx.Value(causeKey{}).(causeOf); ok {
		return c.cx
	}
	if id := relatedTask(meta); id != "" {
		if c := g.taskCaller(id); c != nil {
			return c
		}
	}
	if cx.Value(originKey{}) != nil {
		return cx
	}
	return g.cause()
}

// offer is what a connection declares it answers: the elicitation modes, sampling, roots.
// It is a plain value.
type offer struct {
	modes    []elicitation.Mode
	sampling bool
	roots    bool
}

// wanted is what the client declares when it connects now: the modes of the elicitation
// responders and offers visible from its scope, sampling when a sampler or an offer is
// visible, roots when the configuration lists some.
func (s *supervisor) wanted() offer {
	return offer{modes: elicitation.Modes(s.c), sampling: sampling.Available(s.c), roots: len(s.cfg.Roots) > 0}
}

// covers reports whether o declares everything w does.
func (o offer) covers(w offer) bool {
	for _, m := range w.modes {
		if !slices.Contains(o.modes, m) {
			return false
		}
	}
	return (o.sampling || !w.sampling) && (o.roots || !w.roots)
}

// String names what o declares, for the log.
func (o offer) String() string {
	var parts []string
	for _, m := range o.modes {
		parts = append(parts, "elicitation."+string(m))
	}
	if o.sampling {
		parts = append(parts, "sampling")
	}
	if o.roots {
		parts = append(parts, "roots")
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// followOffers makes the client renegotiate when what it would declare grows after it
// connected: a responder or a sampler provided later (a plugin that loaded after the
// client, a console added by a reload). Listeners run on the providing goroutine: they
// only compare and signal.
func (s *supervisor) followOffers(c *ctx.Context) error {
	check := func() {
		if g := s.live.Load(); g != nil && !g.offered.covers(s.wanted()) {
			g.signalRenegotiate()
		}
	}
	if _, err := elicitation.ChangedEvent.On(c, func(elicitation.Change) error { check(); return nil }); err != nil {
		return err
	}
	_, err := sampling.ChangedEvent.On(c, func(sampling.Change) error { check(); return nil })
	return err
}

// serverRequests adds to a generation's client options the handlers of the requests a server
// may send, with the capabilities that announce them (g.offered): elicitation when a
// responder or an offer is visible from the client's scope (with its modes), sampling when a
// sampler or an offer is, roots when the configuration lists some. The responders and
// samplers are looked up when a request arrives. It returns what to do with the new client
// (add the roots).
func (s *supervisor) serverRequests(g *generation, co *mcp.ClientOptions) func(*mcp.Client) {
	caps := co.Capabilities
	if caps == nil {
		caps = &mcp.ClientCapabilities{}
		co.Capabilities = caps
	}
	g.offered = s.wanted()
	if modes := g.offered.modes; len(modes) > 0 {
		caps.Elicitation = &mcp.ElicitationCapabilities{}
		for _, m := range modes {
			switch m {
			case elicitation.ModeForm:
				caps.Elicitation.Form = &mcp.FormElicitationCapabilities{}
			case elicitation.ModeURL:
				caps.Elicitation.URL = &mcp.URLElicitationCapabilities{}
			}
		}
		co.ElicitationHandler = func(cx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return s.elicit(cx, g, r.Params)
		}
		co.ElicitationCompleteHandler = func(_ context.Context, r *mcp.ElicitationCompleteNotificationRequest) {
			if r.Params == nil {
				return
			}
			err := elicitation.CompleteEvent.Emit(s.c, elicitation.Completion{Server: s.cfg.ServerName, Scope: s.c.Scope(), ID: r.Params.ElicitationID})
			if err != nil {
				s.log.Warn("elicitation completion listener failed", "err", err)
			}
		}
	}
	if g.offered.sampling {
		caps.Sampling = &mcp.SamplingCapabilities{}                                                                         //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
		co.CreateMessageHandler = func(cx context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) { //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
			return s.sample(cx, g, r.Params)
		}
	}
	elicits := co.ElicitationHandler != nil
	if g.offered.roots {
		caps.RootsV2 = &mcp.RootCapabilities{ListChanged: true} //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)
	}
	return func(c *mcp.Client) {
		registerTaskMethods(c)
		c.AddSendingMiddleware(tasksMiddleware(g))
		if elicits {
			c.AddReceivingMiddleware(s.formsAsSent(g))
		}
		if g.offered.roots {
			g.client.Store(c)
			c.AddRoots(s.rootList()...) //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)
			c.AddReceivingMiddleware(s.callerRoots(g))
		}
		if elicits || g.offered.sampling {
			c.AddReceivingMiddleware(s.taskReceiver(g)) // outermost: it runs the others later
		}
	}
}

// formsAsSent answers elicitation/create itself instead of the SDK's client: go-sdk (v1.8.0)
// checks a form's schema before its handler with rules narrower than the specification's
// (a titled multi-select whose items say "type": "string" beside their anyOf, as go-sdk's
// own conformance server sends it, is refused), and checks an accepted answer against the
// schema after it, which turns an answer relayed from a gateway's client into an error.
// elicit checks the form with the elicitation package's parser (the specification's shapes),
// and whoever shows the form checks the answer against it.
func (s *supervisor) formsAsSent(g *generation) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(cx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			r, ok := req.(*mcp.ElicitRequest)
			if method != "elicitation/create" || !ok || r.Params == nil {
				return next(cx, method, req)
			}
			switch p := r.Params; {
			case p.Mode == "url" && p.RequestedSchema != nil:
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestedSchema must not be set for URL elicitation"}
			case p.Mode == "url" && p.URL == "":
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "URL must be set for URL elicitation"}
			case (p.Mode == "" || p.Mode == "form") && p.URL != "":
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "URL must not be set for form elicitation"}
			case p.Mode != "" && p.Mode != "form" && p.Mode != "url":
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unsupported elicitation mode: %q", p.Mode)}
			}
			return s.elicit(cx, g, r.Params)
		}
	}
}

// rootList returns the current roots (configured, or as last updated) as MCP roots.
func (s *supervisor) rootList() []*mcp.Root { //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)
	uris := s.roots.Load()
	if uris == nil {
		return nil
	}
	out := make([]*mcp.Root, len(*uris)) //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)
	for i, u := range *uris {
		out[i] = &mcp.Root{URI: u} //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)
	}
	return out
}

// rootURIs converts configured roots; a root that cannot be converted (validated: only a
// vanished home directory) is skipped with a warning.
func (s *supervisor) rootURIs(roots []string) []string {
	out := make([]string, 0, len(roots))
	for _, r := range roots {
		uri, err := rootURI(r)
		if err != nil {
			s.log.Warn("root skipped", "root", r, "err", err)
			continue
		}
		out = append(out, uri)
	}
	return out
}

// RootsOnlyChange reports whether next differs from prev in its roots alone, both listing
// some: a running client then takes the new list without reconnecting (the server is sent
// notifications/roots/list_changed). Adding the first root or removing the last changes the
// capabilities, which needs a new connection.
func RootsOnlyChange(prev, next Config) bool {
	if len(prev.Roots) == 0 || len(next.Roots) == 0 || slices.Equal(prev.Roots, next.Roots) {
		return false
	}
	prev.Roots, next.Roots = nil, nil
	a, errA := json.Marshal(prev)
	b, errB := json.Marshal(next)
	return errA == nil && errB == nil && bytes.Equal(a, b)
}

// updateRoots is the client's configuration update hook: it takes a change of roots alone
// (RootsOnlyChange) in place, telling the live session's server, and refuses anything else
// (the scope then restarts).
func (s *supervisor) updateRoots(next Config) bool {
	next, err := expandAtMount(s.c, next)
	if err != nil || !RootsOnlyChange(s.cfg, next) {
		return false
	}
	uris := s.rootURIs(next.Roots)
	prev := s.roots.Swap(&uris)
	g := s.live.Load()
	if g == nil {
		return true
	}
	c := g.client.Load()
	if c == nil {
		return true
	}
	var gone []string
	for _, u := range *prev {
		if !slices.Contains(uris, u) {
			gone = append(gone, u)
		}
	}
	// Each call that changes the list sends one notifications/roots/list_changed.
	c.RemoveRoots(gone...)      //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)
	c.AddRoots(s.rootList()...) //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)
	s.log.Info("roots updated", "roots", len(uris))
	return true
}

// rootsKey carries a caller's roots (WithRoots).
type rootsKey struct{}

// RootsFunc returns a caller's roots; see [WithRoots].
type RootsFunc func(cx context.Context) ([]*mcp.Root, error) //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)

// ErrNoRoots is returned by a [RootsFunc] that has no roots to give: the configured roots
// are answered instead.
var ErrNoRoots = errors.New("mcpclient: the caller has no roots")

// WithRoots returns a context for calls whose server's roots/list, when it is attributed to
// such a call (see [WithOrigin]), is answered by fn: a gateway answers with the roots of its
// downstream session's client. A server's roots/list that is attributed to no call, or
// whose fn returns ErrNoRoots or fails, gets the configured roots. Only a server with roots
// configured is offered the roots capability, so only such a server asks.
func WithRoots(pcx context.Context, fn RootsFunc) context.Context {
	return context.WithValue(pcx, rootsKey{}, fn)
}

// callerRoots is the receiving middleware of a client with roots: a roots/list caused by a
// call with WithRoots is answered with the caller's roots.
func (s *supervisor) callerRoots(g *generation) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(cx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "roots/list" {
				return next(cx, method, req)
			}
			callcx := g.cause()
			if callcx == nil {
				return next(cx, method, req)
			}
			fn, ok := callcx.Value(rootsKey{}).(RootsFunc)
			if !ok {
				return next(cx, method, req)
			}
			var roots []*mcp.Root                  //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)
			err := ctx.Safely(func() (err error) { // the caller's code: its panic is a failure like an error
				roots, err = fn(cx)
				return err
			})
			if err != nil {
				if !errors.Is(err, ErrNoRoots) {
					s.log.Warn("the caller's roots could not be listed; answering the configured roots", "err", err)
				}
				return next(cx, method, req)
			}
			if roots == nil {
				roots = []*mcp.Root{} //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)
			}
			return &mcp.ListRootsResult{Roots: roots}, nil //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)
		}
	}
}

// elicit answers one elicitation/create through the elicitation service. The idle deadlines
// of the generation's calls are held meanwhile; elicitationTimeoutMs bounds the wait, and
// its expiry is reported as "cancel".
func (s *supervisor) elicit(cx context.Context, g *generation, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	req := &elicitation.Request{Server: s.cfg.ServerName, Scope: s.c.Scope(), Mode: elicitation.ModeForm,
		Message: s.scrub.Replace(p.Message), URL: p.URL, ID: p.ElicitationID, Call: g.callOf(cx, p.Meta)}
	if p.Mode == "url" || p.Mode == "" && p.URL != "" {
		req.Mode = elicitation.ModeURL
	} else {
		form, err := elicitation.ParseForm(p.RequestedSchema)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("mcp server %q: elicitation: %v", s.cfg.ServerName, err)}
		}
		req.Form, req.Schema = form, p.RequestedSchema
	}
	g.watch.hold()
	defer g.watch.release()
	timeout := s.cfg.ElicitationTimeout()
	ecx, cancel := context.WithTimeoutCause(cx, timeout, errElicitationTimeout)
	defer cancel()
	started := time.Now()
	res, err := elicitation.Elicit(ecx, s.c, req)
	switch {
	case errors.Is(context.Cause(ecx), errElicitationTimeout):
		s.log.Warn("elicitation timed out; reported as cancel", "mode", string(req.Mode), "timeout", timeout)
		return &mcp.ElicitResult{Action: string(elicitation.Cancel)}, nil
	case cx.Err() != nil:
		return nil, context.Cause(cx)
	case err != nil && res == nil:
		return nil, err
	case err != nil:
		s.log.Info("elicitation declined: nobody answered", "mode", string(req.Mode), "err", err)
	default:
		s.log.Info("elicitation answered", "mode", string(req.Mode), "action", string(res.Action), "elapsed", time.Since(started).Round(time.Millisecond))
	}
	return &mcp.ElicitResult{Action: string(res.Action), Content: res.Content}, nil
}

var errElicitationTimeout = errors.New("no answer within elicitationTimeoutMs")

// sample answers one sampling/createMessage through the sampling service, holding the idle
// deadlines of the generation's calls meanwhile.
func (s *supervisor) sample(cx context.Context, g *generation, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) { //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
	g.watch.hold()
	defer g.watch.release()
	res, err := sampling.Sample(cx, s.c, &sampling.Request{Server: s.cfg.ServerName, Scope: s.c.Scope(), Params: p, Call: g.callOf(cx, p.Meta)})
	if err != nil {
		return nil, fmt.Errorf("mcp server %q: sampling/createMessage: %w", s.cfg.ServerName, err)
	}
	return res, nil
}
