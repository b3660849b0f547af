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

// Sessions on protocol 2026-07-28 and later cannot be sent requests while they wait for a
// result: a server asks them through input requests in the result instead (multi
// round-trip requests, SEP-2322), and the client retries the request with the answers. For
// such a session the gateway runs a tool call, resource read or prompt in the background;
// a server request it causes ends the round with an input-required result carrying the
// question and a request state naming the call, and the retry carrying that state delivers
// the answer and waits for the next question or the result. The server's progress reaches
// the session during each round, with the token of that round's request.

// roundIdle bounds how long a call waits for the client's retry after an input-required
// result: a client that never retries does not hold the upstream call for ever.
const roundIdle = 10 * time.Minute

// inputKey is the ID of the one input request of a round.
const inputKey = "gateway"

// inRounds reports whether ss is a session whose server requests travel in results.
func inRounds(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	ip := ss.InitializeParams()
	return ip != nil && ip.ProtocolVersion >= serverRequestsAllowedBefore
}

// roundCall is a request of a 2026-07-28 session running in the background.
type roundCall struct {
	g        *Gateway
	what     string // the request that started the call: its method and target
	caps     *mcp.ClientCapabilities
	cancel   context.CancelFunc
	ended    <-chan struct{} // closed when the call ends (answered, cancelled, idle, the gateway closed)
	asks     chan *question  // server requests of the call, one at a time
	result   chan roundEnd   // the call's outcome (buffered)
	progress string          // the gateway's progress token of the call upstream

	asked *question   // the question of the last round, awaiting the retry
	idle  *time.Timer // cancels the call when the retry does not come
}

// roundEnd is the outcome of a round call.
type roundEnd struct {
	res mcp.Result
	err error
}

// roundAsk is an input-required round: the input requests and the state of the retry.
type roundAsk struct {
	requests mcp.InputRequestMap
	state    string
}

// question is one server request of a round call and where its answer goes.
type question struct {
	req    mcp.InputRequest
	answer chan mcp.InputResponse // buffered; nil sent when the retry did not carry one
}

// roundWork is the upstream request of a round call, made with bcx (its server requests
// go to the round call) and meta (the gateway's progress token).
type roundWork func(bcx context.Context, meta mcp.Meta) (mcp.Result, error)

// runInRounds runs the request of a 2026-07-28 session: a first request (state empty)
// starts work in the background, a retry resumes the call its state names. It ends the
// round with the call's result or error, or with the call's next server request (ask).
// token is the progress token of this round's request; what names the request in errors.
func (g *Gateway) runInRounds(cx context.Context, ss *mcp.ServerSession, what, state string, answers mcp.InputResponseMap, token any, work roundWork) (mcp.Result, *roundAsk, error) {
	if state != "" {
		v, ok := g.rounds.Load(state)
		if !ok {
			return nil, nil, invalidParams(fmt.Errorf("gateway: %s: the request state is unknown or expired", what))
		}
		rc := v.(*roundCall)
		if rc.what != what {
			// The round goes on for its own retry.
			return nil, nil, invalidParams(fmt.Errorf("gateway: %s: the request state belongs to %s", what, rc.what))
		}
		if !g.rounds.CompareAndDelete(state, rc) { // expired, or taken by a concurrent retry
			return nil, nil, invalidParams(fmt.Errorf("gateway: %s: the request state is unknown or expired", what))
		}
		rc.idle.Stop()
		var answer mcp.InputResponse
		if answers != nil {
			answer = answers[inputKey]
		}
		// The progress the answer causes goes to this round's request: routed before the
		// server has the answer, or it could come before the route and be lost.
		defer rc.route(ss, token)()
		rc.asked.answer <- answer
		rc.asked = nil
		return rc.wait(cx)
	}
	rc := &roundCall{g: g, what: what, caps: ss.InitializeParams().Capabilities, asks: make(chan *question), result: make(chan roundEnd, 1),
		progress: fmt.Sprintf("gw-%d", g.tokenSeq.Add(1))}
	if rc.caps == nil {
		rc.caps = &mcp.ClientCapabilities{}
	}
	bcx, cancel := context.WithCancel(context.WithoutCancel(cx))
	rc.cancel, rc.ended = cancel, bcx.Done()
	bcx = mcpclient.WithOrigin(bcx, rc)
	bcx = elicitation.WithResponder(bcx, rc)
	bcx = sampling.WithSampler(bcx, rc)
	bcx = mcpclient.WithRoots(bcx, rc.roots)
	defer rc.route(ss, token)() // before the call starts: its first progress may come at once
	if _, err := g.life.Go("gateway:round:"+rc.progress, func(runcx context.Context) error {
		defer cancel()
		defer context.AfterFunc(runcx, cancel)() // the gateway's close ends the call
		res, err := work(bcx, mcp.Meta{"progressToken": rc.progress})
		rc.result <- roundEnd{res, err}
		return nil
	}); err != nil {
		cancel()
		return nil, nil, fmt.Errorf("%s: %w", what, errClosed)
	}
	return rc.wait(cx)
}

// typedRounds is runInRounds for a request whose result is an R: work's result, or the
// input-required round asked makes of the requests and the state of the retry.
func typedRounds[R mcp.Result](cx context.Context, g *Gateway, ss *mcp.ServerSession, what string, p roundParams, work func(bcx context.Context, meta mcp.Meta) (R, error), asked func(requests mcp.InputRequestMap, state string) R) (R, error) {
	var zero R
	res, ask, err := g.runInRounds(cx, ss, what, p.state, p.answers, p.token, func(bcx context.Context, meta mcp.Meta) (mcp.Result, error) {
		return work(bcx, meta)
	})
	switch {
	case err != nil:
		return zero, err
	case ask != nil:
		return asked(ask.requests, ask.state), nil
	}
	r, ok := res.(R)
	if !ok { // runInRounds resumes only the request that started the call
		return zero, fmt.Errorf("gateway: %s: the call's result is a %T", what, res)
	}
	return r, nil
}

// roundParams are what a request carries for its rounds: the state and answers of a retry,
// and its progress token.
type roundParams struct {
	state   string
	answers mcp.InputResponseMap
	token   any
}

// executeInRounds is execute for a session on 2026-07-28.
func (g *Gateway) executeInRounds(cx context.Context, caller *ctx.Context, ss *mcp.ServerSession, p *mcp.CallToolParamsRaw, public string) (*mcp.CallToolResult, error) {
	return typedRounds(cx, g, ss, "tools/call "+public, roundParams{p.RequestState, p.InputResponses, p.GetProgressToken()},
		func(bcx context.Context, meta mcp.Meta) (*mcp.CallToolResult, error) {
			r, err := g.callTool(mcpclient.WithCallMeta(bcx, meta), caller, public, p.Arguments)
			return g.result(r, err), nil
		},
		func(requests mcp.InputRequestMap, state string) *mcp.CallToolResult {
			return &mcp.CallToolResult{InputRequests: requests, RequestState: state}
		})
}

// readInRounds is read for a session on 2026-07-28.
func (g *Gateway) readInRounds(cx context.Context, u *mcpclient.Upstream, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	p := *req.Params
	return typedRounds(cx, g, req.Session, "resources/read "+p.URI, roundParams{p.RequestState, p.InputResponses, p.GetProgressToken()},
		func(bcx context.Context, meta mcp.Meta) (*mcp.ReadResourceResult, error) {
			// The session's _meta names its protocol (2026-07-28), not the upstream's: only
			// the gateway's progress token goes up, as for tool calls.
			q := p
			q.RequestState, q.InputResponses, q.Meta = "", nil, meta
			return u.ReadResource(bcx, &q)
		},
		func(requests mcp.InputRequestMap, state string) *mcp.ReadResourceResult {
			return &mcp.ReadResourceResult{InputRequests: requests, RequestState: state}
		})
}

// promptInRounds is a prompts/get of a session on 2026-07-28, for the prompt raw of u.
func (g *Gateway) promptInRounds(cx context.Context, u *mcpclient.Upstream, cs *mcp.ClientSession, req *mcp.GetPromptRequest, raw string) (*mcp.GetPromptResult, error) {
	p := *req.Params
	return typedRounds(cx, g, req.Session, "prompts/get "+p.Name, roundParams{p.RequestState, p.InputResponses, p.GetProgressToken()},
		func(bcx context.Context, meta mcp.Meta) (*mcp.GetPromptResult, error) {
			q := p
			q.Name, q.RequestState, q.InputResponses, q.Meta = raw, "", nil, meta
			untrack := u.Track(bcx)
			defer untrack()
			return cs.GetPrompt(bcx, &q)
		},
		func(requests mcp.InputRequestMap, state string) *mcp.GetPromptResult {
			return &mcp.GetPromptResult{InputRequests: requests, RequestState: state}
		})
}

// withMeta returns base with extra's keys set over it (a copy; nil when both are empty).
func withMeta(base, extra mcp.Meta) mcp.Meta {
	if len(base) == 0 && len(extra) == 0 {
		return base
	}
	out := mcp.Meta{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

// route sends the server's progress on the call to ss with token (none without one) until
// the function it returns is called: for as long as one round's request waits.
func (rc *roundCall) route(ss *mcp.ServerSession, token any) (end func()) {
	if token == nil {
		return func() {}
	}
	rc.g.tokens.Store(rc.progress, progressTarget{ss: ss, token: token})
	return func() { rc.g.tokens.Delete(rc.progress) }
}

// wait ends a round: with the call's outcome, or with an input-required round for the
// call's next server request. The downstream request's end cancels the call.
func (rc *roundCall) wait(cx context.Context) (mcp.Result, *roundAsk, error) {
	select {
	case end := <-rc.result:
		return end.res, nil, end.err
	case q := <-rc.asks:
		state := "gw-round-" + NewToken()
		rc.asked = q
		rc.g.rounds.Store(state, rc)
		rc.idle = time.AfterFunc(roundIdle, func() {
			if rc.g.rounds.CompareAndDelete(state, rc) {
				rc.cancel()
			}
		})
		return nil, &roundAsk{requests: mcp.InputRequestMap{inputKey: q.req}, state: state}, nil
	case <-cx.Done():
		rc.cancel()
		return nil, nil, context.Cause(cx)
	}
}

// ask puts req to the client in the next round and returns its answer (nil: none).
func (rc *roundCall) ask(cx context.Context, req mcp.InputRequest) (mcp.InputResponse, error) {
	q := &question{req: req, answer: make(chan mcp.InputResponse, 1)}
	select {
	case rc.asks <- q:
	case <-cx.Done():
		return nil, context.Cause(cx)
	case <-rc.ended:
		return nil, errRoundEnded
	}
	select {
	case a := <-q.answer:
		return a, nil
	case <-cx.Done():
		return nil, context.Cause(cx)
	case <-rc.ended: // the retry never came, or the gateway closed: nobody will answer
		return nil, errRoundEnded
	}
}

// errRoundEnded is the error of a server request whose round call ended before the client
// answered it.
var errRoundEnded = errors.New("gateway: the call ended before the client answered")

// errNoAnswer is the error of a round whose retry carried no answer of the expected kind.
var errNoAnswer = errors.New("gateway: the client's retry carried no answer to the input request")

// Supports is true for both modes: Elicit passes what the client cannot show.
func (rc *roundCall) Supports(elicitation.Mode) bool { return true }

// Elicit asks the client in the next round.
func (rc *roundCall) Elicit(cx context.Context, r *elicitation.Request) (*elicitation.Response, error) {
	p, ok := elicitParams(rc.caps, r)
	if !ok {
		return nil, elicitation.ErrPass
	}
	a, err := rc.ask(cx, p)
	if err != nil {
		return nil, err
	}
	res, ok := a.(*mcp.ElicitResult)
	if !ok {
		return nil, errNoAnswer
	}
	return &elicitation.Response{Action: elicitation.Action(res.Action), Content: res.Content, Relayed: true}, nil
}

// CreateMessage asks the client's model in the next round.
func (rc *roundCall) CreateMessage(cx context.Context, r *sampling.Request) (*mcp.CreateMessageResult, error) { //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
	if rc.caps.Sampling == nil { //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
		return nil, sampling.ErrPass
	}
	a, err := rc.ask(cx, r.Params)
	if err != nil {
		return nil, err
	}
	switch res := a.(type) {
	case *mcp.CreateMessageResult: //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
		return res, nil
	case *mcp.CreateMessageWithToolsResult: //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
		if len(res.Content) != 1 {
			return nil, fmt.Errorf("gateway: sampling answer with %d content blocks, want 1", len(res.Content))
		}
		return &mcp.CreateMessageResult{Meta: res.Meta, Content: res.Content[0], Model: res.Model, Role: res.Role, StopReason: res.StopReason}, nil //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
	}
	return nil, errNoAnswer
}

// roots asks the client for its roots in the next round.
func (rc *roundCall) roots(cx context.Context) ([]*mcp.Root, error) { //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)
	if rc.caps.RootsV2 == nil { //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)
		return nil, mcpclient.ErrNoRoots
	}
	a, err := rc.ask(cx, &mcp.ListRootsParams{}) //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)
	if err != nil {
		return nil, err
	}
	res, ok := a.(*mcp.ListRootsResult) //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)
	if !ok {
		return nil, errNoAnswer
	}
	if len(res.Roots) == 0 {
		return nil, mcpclient.ErrNoRoots
	}
	return res.Roots, nil
}
