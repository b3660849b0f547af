package gateway

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/elicitation"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/sampling"
)

// offerName is the name of the gateway's offers in their layer.
const offerName = "gateway"

// Offer declares, in c's layer, that a gateway answers elicitation (form and URL modes)
// and sampling for the MCP clients there and below ([elicitation.Offer], [sampling.Offer]):
// a request caused by a downstream session's call goes to that session, any other to the
// host's own responders, or nobody. [New] offers them too, and the clients that connected
// before it reconnect once to declare them; a host that will serve a gateway offers them
// before it mounts the fleet (harness serve does), and then none has to. Offer is
// idempotent per layer; the offers are effects of c.
//
// The two offers are one step: both are in place before either is announced, so that a
// client reconnects once, declaring both. Announced one by one, a client could reconnect
// between them and then again, and a new session of its per-server route would meet the
// second reconnection (503) after the first had ended.
func Offer(c *ctx.Context) error {
	_, announceElicitation, err := elicitation.OfferQuietly(c, offerName, elicitation.ModeForm, elicitation.ModeURL)
	if err != nil && !errors.Is(err, ctx.ErrDuplicateName) {
		return fmt.Errorf("gateway: offering elicitation: %w", err)
	}
	_, announceSampling, err := sampling.OfferQuietly(c, offerName)
	if announceElicitation != nil {
		announceElicitation()
	}
	if err != nil && !errors.Is(err, ctx.ErrDuplicateName) {
		return fmt.Errorf("gateway: offering sampling: %w", err)
	}
	if announceSampling != nil {
		announceSampling()
	}
	return nil
}

// read forwards a downstream resources/read to u for the session that sent it: with a
// gateway progress token in place of the session's (mapped back by forwardProgress), and
// the server requests it causes directed to that session.
func (g *Gateway) read(cx context.Context, u *mcpclient.Upstream, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	if inRounds(req.Session) {
		return g.readInRounds(cx, u, req)
	}
	p := *req.Params
	meta, forget := g.progressMeta(req.Session, req.Params.GetProgressToken())
	defer forget()
	if meta != nil {
		p.Meta = withMeta(req.Params.Meta, meta)
	}
	cx, end := g.forCaller(cx, req.Session)
	defer end()
	return u.ReadResource(cx, &p)
}

// track returns the context of a request forwarded to u for the downstream session ss
// (prompts/get, completion/complete), in view of u's server requests until done is called.
func (g *Gateway) track(cx context.Context, ss *mcp.ServerSession, u *mcpclient.Upstream) (_ context.Context, done func()) {
	cx, end := g.forCaller(cx, ss)
	untrack := u.Track(cx)
	return cx, func() {
		untrack()
		end()
	}
}

// forCaller returns the context of a request the gateway forwards upstream for the
// downstream session ss: the server requests it causes (elicitation, sampling, roots/list)
// are directed to ss, and to no other session (mcpclient.WithOrigin). end must be called
// when the request ends: a server request still waiting on ss when ss has no request in
// flight any more is cancelled then (servers do not always tell).
func (g *Gateway) forCaller(cx context.Context, ss *mcp.ServerSession) (_ context.Context, end func()) {
	if ss == nil {
		return cx, func() {}
	}
	d := &downstream{g: g, ss: ss}
	cx = mcpclient.WithOrigin(cx, ss)
	cx = elicitation.WithResponder(cx, d)
	cx = sampling.WithSampler(cx, d)
	return mcpclient.WithRoots(cx, d.roots), g.begin(ss)
}

// activity is one downstream session's requests in flight through the gateway; idle is
// closed when the last one ends.
type activity struct {
	n    int
	idle chan struct{}
}

// begin counts a request of ss in flight until end is called.
func (g *Gateway) begin(ss *mcp.ServerSession) (end func()) {
	g.activeMu.Lock()
	a := g.active[ss]
	if a == nil {
		a = &activity{idle: make(chan struct{})}
		g.active[ss] = a
	}
	a.n++
	g.activeMu.Unlock()
	return func() {
		g.activeMu.Lock()
		defer g.activeMu.Unlock()
		if a.n--; a.n == 0 {
			close(a.idle)
			delete(g.active, ss)
		}
	}
}

// idle returns a channel closed when ss has no request in flight through the gateway.
func (g *Gateway) idle(ss *mcp.ServerSession) <-chan struct{} {
	g.activeMu.Lock()
	defer g.activeMu.Unlock()
	if a := g.active[ss]; a != nil {
		return a.idle
	}
	return closed
}

var closed = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// errCallsEnded is the cause of a server request to a downstream session cancelled because
// the session's calls ended.
var errCallsEnded = errors.New("gateway: the downstream session's calls ended")

// downstream answers the server requests caused by one downstream session's calls by
// asking that session's client, when the client can be asked: it advertised the capability
// and its session was initialized with a protocol version that allows requests from the
// server (before 2026-07-28, which replaces them by input requests in results: rounds.go
// bridges those for tool calls). Otherwise it passes, and the host's own responders answer
// (or nobody: decline).
type downstream struct {
	g  *Gateway
	ss *mcp.ServerSession
}

// serverRequestsAllowedBefore is the first protocol version in which a server may not send
// requests of its own while it serves one (SEP-2322).
const serverRequestsAllowedBefore = "2026-07-28"

// caps returns the client capabilities of the session when it can be sent requests, else nil.
func (d *downstream) caps() *mcp.ClientCapabilities {
	ip := d.ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.ProtocolVersion >= serverRequestsAllowedBefore {
		return nil
	}
	return ip.Capabilities
}

// Supports is true for both modes: Elicit passes what the session's client cannot show.
func (d *downstream) Supports(elicitation.Mode) bool { return true }

// Elicit asks the downstream session's client.
func (d *downstream) Elicit(cx context.Context, r *elicitation.Request) (*elicitation.Response, error) {
	caps := d.caps()
	if caps == nil {
		return nil, elicitation.ErrPass
	}
	p, ok := elicitParams(caps, r)
	if !ok {
		return nil, elicitation.ErrPass
	}
	p.Meta = relatedTo(r.Call, p.Meta)
	rcx, cancel := d.related(cx)
	defer cancel()
	if r.Mode == elicitation.ModeURL && r.ID != "" {
		d.g.awaitCompletion(r.Server, r.ID, d.ss)
	}
	answered := &sessionAnswer{}
	res, err := d.ss.Elicit(context.WithValue(rcx, sessionAnswerKey{}, answered), p)
	if err != nil && answered.res != nil {
		// The session's client answered, and go-sdk refused the answer against a schema its
		// own check reads more narrowly than the specification (a titled multi-select whose
		// items say "type": "string" beside their anyOf, SEP-1330): what the user answered
		// is forwarded, and the server judges it, as over a direct connection.
		d.g.log.Debug("forwarding an answer go-sdk's check refused", "session", d.ss.ID(), "server", r.Server, "err", err)
		res, err = answered.res, nil
	}
	if err != nil {
		d.g.forgetCompletion(r.Server, r.ID)
		if cx.Err() != nil {
			return nil, context.Cause(cx)
		}
		return nil, fmt.Errorf("gateway: downstream session %s: elicitation/create: %w", d.ss.ID(), err)
	}
	if res.Action != string(elicitation.Accept) {
		d.g.forgetCompletion(r.Server, r.ID)
	}
	return &elicitation.Response{Action: elicitation.Action(res.Action), Content: res.Content, Relayed: true}, nil
}

// sessionAnswer holds the answer a downstream session's client sent to an
// elicitation/create, as it came (keepAnswers), before go-sdk checks it.
type sessionAnswer struct{ res *mcp.ElicitResult }

type sessionAnswerKey struct{}

// keepAnswers is the sending middleware of the gateway's servers: the result of an
// elicitation/create sent with a sessionAnswer in its context is kept there as the client
// sent it, so that an answer the SDK then refuses is not lost (downstream.Elicit).
func keepAnswers(next mcp.MethodHandler) mcp.MethodHandler {
	return func(cx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(cx, method, req)
		if a, ok := cx.Value(sessionAnswerKey{}).(*sessionAnswer); ok && err == nil {
			if er, ok := res.(*mcp.ElicitResult); ok {
				a.res = er
			}
		}
		return res, err
	}
}

// elicitParams is r as an elicitation/create to a client with caps; false when the client
// cannot show it.
func elicitParams(caps *mcp.ClientCapabilities, r *elicitation.Request) (*mcp.ElicitParams, bool) {
	e := caps.Elicitation
	if e == nil {
		return nil, false
	}
	p := &mcp.ElicitParams{Mode: string(r.Mode), Message: r.Message}
	switch r.Mode {
	case elicitation.ModeURL:
		if e.URL == nil {
			return nil, false
		}
		p.URL, p.ElicitationID = r.URL, r.ID
	default:
		if e.Form == nil && e.URL != nil { // neither: form, as the SDK assumes
			return nil, false
		}
		p.RequestedSchema = r.Schema
		if p.RequestedSchema == nil {
			p.RequestedSchema = map[string]any{"type": "object", "properties": map[string]any{}}
		}
	}
	return p, true
}

// CreateMessage asks the downstream session's client for a completion.
func (d *downstream) CreateMessage(cx context.Context, r *sampling.Request) (*mcp.CreateMessageResult, error) { //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
	caps := d.caps()
	if caps == nil || caps.Sampling == nil { //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
		return nil, sampling.ErrPass
	}
	rcx, cancel := d.related(cx)
	defer cancel()
	params := r.Params
	if meta := relatedTo(r.Call, params.Meta); meta != nil {
		p := *params
		p.Meta, params = meta, &p
	}
	res, err := d.ss.CreateMessage(rcx, params) //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
	if err != nil {
		if cx.Err() != nil {
			return nil, context.Cause(cx)
		}
		return nil, fmt.Errorf("gateway: downstream session %s: sampling/createMessage: %w", d.ss.ID(), err)
	}
	return res, nil
}

// relatedTo returns meta with the related-task key naming the downstream task the call
// (callcx, the request's cause) runs as (mcpclient.ServedTask), as the specification asks
// of the requests a task causes; meta unchanged when the call is not a task's.
func relatedTo(callcx context.Context, meta mcp.Meta) mcp.Meta {
	id := mcpclient.ServedTask(callcx)
	if id == "" {
		return meta
	}
	return withMeta(meta, mcp.Meta{mcpclient.RelatedTaskMeta: map[string]any{"taskId": id}})
}

// roots lists the downstream session's roots, when its client has some.
func (d *downstream) roots(cx context.Context) ([]*mcp.Root, error) { //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)
	caps := d.caps()
	if caps == nil || caps.RootsV2 == nil { //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)
		return nil, mcpclient.ErrNoRoots
	}
	res, err := d.ss.ListRoots(cx, nil) //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)
	if err != nil {
		if cx.Err() != nil {
			return nil, context.Cause(cx)
		}
		return nil, fmt.Errorf("gateway: downstream session %s: roots/list: %w", d.ss.ID(), err)
	}
	if len(res.Roots) == 0 {
		return nil, mcpclient.ErrNoRoots // clients such as go-sdk's offer roots and list none
	}
	return res.Roots, nil
}

// related returns the context of a request to the downstream session: it ends with cx, or
// when the session has no request in flight through the gateway any more (the upstream
// server may not send notifications/cancelled for its own request when the call that caused
// it is cancelled). The request goes on the session's standalone stream, not on the stream
// of the call that caused it: the go-sdk drops a notifications/cancelled written to the
// stream of a request that has completed, so a cancelled question would stay on screen.
func (d *downstream) related(cx context.Context) (context.Context, context.CancelFunc) {
	rcx, cancel := context.WithCancelCause(cx)
	idle := d.g.idle(d.ss)
	if _, err := d.g.life.Go("gateway:request:"+d.ss.ID(), func(runcx context.Context) error {
		select {
		case <-idle:
			cancel(errCallsEnded)
		case <-rcx.Done():
		case <-runcx.Done():
			cancel(errClosed)
		}
		return nil
	}); err != nil {
		cancel(errClosed)
	}
	return rcx, func() { cancel(context.Canceled) }
}

// completionKey names a URL-mode elicitation: the server it came from and its ID.
type completionKey struct{ server, id string }

// awaitCompletion remembers that the URL-mode elicitation id of server was shown to ss, so
// that the server's notifications/elicitation/complete reaches ss.
func (g *Gateway) awaitCompletion(server, id string, ss *mcp.ServerSession) {
	g.completions.Store(completionKey{server, id}, ss)
}

func (g *Gateway) forgetCompletion(server, id string) {
	if id != "" {
		g.completions.Delete(completionKey{server, id})
	}
}

// completed forwards a server's notifications/elicitation/complete to the session that was
// shown the URL.
func (g *Gateway) completed(c elicitation.Completion) {
	v, ok := g.completions.LoadAndDelete(completionKey{c.Server, c.ID})
	if !ok {
		return
	}
	cx, cancel := context.WithTimeout(g.life, time.Second)
	defer cancel()
	_ = v.(*mcp.ServerSession).NotifyElicitationComplete(cx, &mcp.ElicitationCompleteParams{ElicitationID: c.ID})
}
