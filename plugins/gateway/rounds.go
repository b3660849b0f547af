package gateway

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/elicitation"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/sampling"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// Sessions on protocol 2026-07-28 and later cannot be sent requests while they wait for a
// result: a server asks them through input requests in the result instead (multi
// round-trip requests, SEP-2322), and the client retries the call with the answers. For
// such a session the gateway runs the tool call in the background; a server request it
// causes ends the round with an input-required result carrying the question and a request
// state naming the call, and the retry carrying that state delivers the answer and waits for
// the next question or the call's result.

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

// roundCall is a tool call of a 2026-07-28 session running in the background.
type roundCall struct {
	g      *Gateway
	caps   *mcp.ClientCapabilities
	cancel context.CancelFunc
	asks   chan *question           // server requests of the call, one at a time
	result chan *mcp.CallToolResult // the call's result (buffered)

	asked *question   // the question of the last round, awaiting the retry
	idle  *time.Timer // cancels the call when the retry does not come
}

// question is one server request of a round call and where its answer goes.
type question struct {
	req    mcp.InputRequest
	answer chan mcp.InputResponse // buffered; nil sent when the retry did not carry one
}

// executeInRounds is execute for a session on 2026-07-28: a first call starts the tool call,
// a retry (with the request state of an input-required result) resumes it.
func (g *Gateway) executeInRounds(cx context.Context, caller *ctx.Context, ss *mcp.ServerSession, p *mcp.CallToolParamsRaw, public string) (*mcp.CallToolResult, error) {
	if p.RequestState != "" {
		v, ok := g.rounds.LoadAndDelete(p.RequestState)
		if !ok {
			return nil, fmt.Errorf("gateway: tools/call %s: the request state is unknown or expired", public)
		}
		rc := v.(*roundCall)
		rc.idle.Stop()
		var answer mcp.InputResponse
		if p.InputResponses != nil {
			answer = p.InputResponses[inputKey]
		}
		rc.asked.answer <- answer
		rc.asked = nil
		return rc.wait(cx)
	}
	ip := ss.InitializeParams()
	rc := &roundCall{g: g, caps: ip.Capabilities, asks: make(chan *question), result: make(chan *mcp.CallToolResult, 1)}
	if rc.caps == nil {
		rc.caps = &mcp.ClientCapabilities{}
	}
	bcx, cancel := context.WithCancel(context.WithoutCancel(cx))
	stop := context.AfterFunc(g.life, cancel)
	rc.cancel = func() { stop(); cancel() }
	bcx = mcpclient.WithOrigin(bcx, rc)
	bcx = elicitation.WithResponder(bcx, rc)
	bcx = sampling.WithSampler(bcx, rc)
	bcx = mcpclient.WithRoots(bcx, rc.roots)
	g.wg.Go(func() {
		defer rc.cancel()
		res, err := g.reg.Execute(bcx, caller, public, p.Arguments, toolregistry.ExecOptions{})
		rc.result <- g.result(res, err)
	})
	return rc.wait(cx)
}

// wait ends the round: with the call's result, or with an input-required result for the
// call's next server request. The downstream request's end cancels the call.
func (rc *roundCall) wait(cx context.Context) (*mcp.CallToolResult, error) {
	select {
	case res := <-rc.result:
		return res, nil
	case q := <-rc.asks:
		state := "gw-round-" + NewToken()
		rc.asked = q
		rc.g.rounds.Store(state, rc)
		rc.idle = time.AfterFunc(roundIdle, func() {
			if rc.g.rounds.CompareAndDelete(state, rc) {
				rc.cancel()
			}
		})
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{inputKey: q.req}, RequestState: state}, nil
	case <-cx.Done():
		rc.cancel()
		return nil, context.Cause(cx)
	}
}

// ask puts req to the client in the next round and returns its answer (nil: none).
func (rc *roundCall) ask(cx context.Context, req mcp.InputRequest) (mcp.InputResponse, error) {
	q := &question{req: req, answer: make(chan mcp.InputResponse, 1)}
	select {
	case rc.asks <- q:
	case <-cx.Done():
		return nil, context.Cause(cx)
	}
	select {
	case a := <-q.answer:
		return a, nil
	case <-cx.Done():
		return nil, context.Cause(cx)
	}
}

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
func (rc *roundCall) CreateMessage(cx context.Context, r *sampling.Request) (*mcp.CreateMessageResult, error) {
	if rc.caps.Sampling == nil {
		return nil, sampling.ErrPass
	}
	a, err := rc.ask(cx, r.Params)
	if err != nil {
		return nil, err
	}
	switch res := a.(type) {
	case *mcp.CreateMessageResult:
		return res, nil
	case *mcp.CreateMessageWithToolsResult:
		if len(res.Content) != 1 {
			return nil, fmt.Errorf("gateway: sampling answer with %d content blocks, want 1", len(res.Content))
		}
		return &mcp.CreateMessageResult{Meta: res.Meta, Content: res.Content[0], Model: res.Model, Role: res.Role, StopReason: res.StopReason}, nil
	}
	return nil, errNoAnswer
}

// roots asks the client for its roots in the next round.
func (rc *roundCall) roots(cx context.Context) ([]*mcp.Root, error) {
	if rc.caps.RootsV2 == nil {
		return nil, mcpclient.ErrNoRoots
	}
	a, err := rc.ask(cx, &mcp.ListRootsParams{})
	if err != nil {
		return nil, err
	}
	res, ok := a.(*mcp.ListRootsResult)
	if !ok {
		return nil, errNoAnswer
	}
	if len(res.Roots) == 0 {
		return nil, mcpclient.ErrNoRoots
	}
	return res.Roots, nil
}
