package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cordisgo/harness/plugins/agent"
)

// The main agent's remote methods (plugins/agent/remote.go) that ask uses on a running host.
const (
	methodAgentStart   = "agent/start"
	methodAgentSend    = "agent/send"
	methodAgentEvents  = "agent/events"
	methodAgentCancel  = "agent/cancel"
	methodAgentApprove = "agent/approve"
	methodAgentClose   = "agent/close"
)

// errTurnOver ends the events stream of a turn that has ended.
var errTurnOver = errors.New("turn over")

// runningAgentHost returns the running host whose agent a turn can use, or nil: no host (or
// --local, or a profile given on the command line), or a host without an agent, said in one
// line, or a choice the host's agent cannot honour (--mode, --allow: its permissions are
// its own), said in one line too.
func (a *invocation) runningAgentHost(c context.Context, f agentFlags) (*runningHost, error) {
	rh, err := a.findHost(c, a.fwd)
	if err != nil || rh == nil {
		return nil, err
	}
	switch {
	case !rh.methods[methodAgentStart]:
		errorf(a.stderr, a.prog, "%s has no agent (its profile mounts no model or agent); working in process", rh)
		return nil, nil
	case f.mode != "":
		errorf(a.stderr, a.prog, "--mode: the agent of %s runs in its own mode; working in process", rh)
		return nil, nil
	case len(f.allow) > 0:
		errorf(a.stderr, a.prog, "--allow: the agent of %s has its own permissions; working in process", rh)
		return nil, nil
	}
	return rh, nil
}

// askOnHost runs ask's turn on the running host's agent: a session started there, the task
// sent, its events followed until the turn ends, the session closed. Nobody is asked for
// approvals: a call the host's permissions would ask about is refused, as in process.
// Interrupting cancels the turn on the host.
func (a *invocation) askOnHost(c context.Context, rh *runningHost, f agentFlags, task string) error {
	cl := rh.cl
	var info agent.SessionInfo
	if err := cl.Call(c, methodAgentStart, map[string]any{"agent": f.agent, "model": f.model}, &info); err != nil {
		return a.agentHostError(c, rh, methodAgentStart, err)
	}
	bg := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.WithoutCancel(c), hostAnswerTimeout)
	}
	defer func() {
		cx, cancel := bg()
		defer cancel()
		_ = cl.Call(cx, methodAgentClose, map[string]any{"session": info.ID}, nil)
	}()
	if err := cl.Call(c, methodAgentSend, map[string]any{"session": info.ID, "text": task}, nil); err != nil {
		return a.agentHostError(c, rh, methodAgentSend, err)
	}
	enc := json.NewEncoder(a.stdout)
	var end *agent.TurnEnd
	var turnErr error
	err := cl.Stream(c, methodAgentEvents, map[string]any{"session": info.ID}, func(raw json.RawMessage) error {
		var ev agent.Event
		if err := json.Unmarshal(raw, &ev); err != nil {
			return fmt.Errorf("reading the host's events: %w", err)
		}
		if err := a.printEvent(enc, ev, f.json); err != nil {
			return err
		}
		switch {
		case ev.Type == agent.EventApprovalAsked && ev.Approval != nil && ev.Agent == "":
			cx, cancel := bg()
			defer cancel()
			answer := map[string]any{"session": info.ID, "id": ev.Approval.ID, "decision": agent.DecisionDeny,
				"reason": "nobody to ask (harness ask); run harness chat to approve calls, or ask --local --allow PATTERN"}
			if err := cl.Call(cx, methodAgentApprove, answer, nil); err != nil && !errors.Is(err, context.Canceled) {
				errorf(a.stderr, a.prog, "refusing %s: %v", ev.Approval.Tool, err)
			}
		case ev.Type == agent.EventError && ev.Agent == "":
			turnErr = errors.New(ev.Error)
		case ev.Type == agent.EventTurnEnd && ev.Agent == "" && ev.End != nil:
			end = ev.End
			return errTurnOver
		}
		return nil
	})
	switch {
	case errors.Is(err, errTurnOver):
	case c.Err() != nil:
		cx, cancel := bg()
		defer cancel()
		_ = cl.Call(cx, methodAgentCancel, map[string]any{"session": info.ID}, nil)
		return failure(errors.New("interrupted"))
	case err != nil:
		return failure(rh.explain(c, "", err))
	default:
		return failure(fmt.Errorf("%s closed the session before the turn ended", rh))
	}
	switch end.Reason {
	case agent.StopError:
		if turnErr == nil {
			turnErr = errors.New("the turn failed")
		}
	case agent.StopCancelled:
		turnErr = agent.ErrCancelled
	default:
		turnErr = nil
	}
	return a.turnOutcome(end, turnErr, info.ID, f)
}

// agentHostError words a host's refusal of an agent method: an unknown agent or model is a
// usage error, as in process.
func (a *invocation) agentHostError(c context.Context, rh *runningHost, method string, err error) error {
	if c.Err() != nil {
		return failure(errors.New("interrupted"))
	}
	return agentError(fmt.Errorf("%s: %s: %w", rh, method, err))
}
