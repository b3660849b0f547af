package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/cordisgo/harness/internal/termsafe"
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
	enc := json.NewEncoder(a.stdout)
	var end *agent.TurnEnd
	var turnErr, sendErr error
	sent := false
	err := cl.Stream(c, methodAgentEvents, map[string]any{"session": info.ID}, func(raw json.RawMessage) error {
		var ev agent.Event
		if err := json.Unmarshal(raw, &ev); err != nil {
			return fmt.Errorf("reading the host's events: %w", err)
		}
		if !sent {
			// The stream is open (its first event is the session's header): the task is sent
			// now, so that none of the turn's live events (--json shows them) passes before.
			sent = true
			if sendErr = cl.Call(c, methodAgentSend, map[string]any{"session": info.ID, "text": task}, nil); sendErr != nil {
				return sendErr
			}
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
	case sendErr != nil:
		return a.agentHostError(c, rh, methodAgentSend, sendErr)
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

// methodAgentOpen resumes a stored session on the host (chat --resume, /resume).
const methodAgentOpen = "agent/open"

// hostSession starts (or opens) a session on the host with method and makes it the chat's.
func (ch *chat) hostSession(method string, params map[string]any) error {
	cx, cancel := context.WithTimeout(context.Background(), hostAnswerTimeout)
	defer cancel()
	var info agent.SessionInfo
	if err := ch.host.cl.Call(cx, method, params, &info); err != nil {
		return fmt.Errorf("%s: %s: %w", ch.host, method, err)
	}
	ch.close()
	ch.ss, ch.seq = &info, 0
	ch.banner(info.Agent, info.Model, info.ID)
	return nil
}

// hostTools lists the host's tools, as `tools list` run for the host (harness/exec) does.
func (ch *chat) hostTools() {
	cx, cancel := context.WithTimeout(context.Background(), hostAnswerTimeout)
	defer cancel()
	err := ch.host.cl.Stream(cx, methodHostExec, execParams{Args: []string{"tools", "list"}}, func(raw json.RawMessage) error {
		var ev execEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return err
		}
		ch.io.printf("%s", termsafe.String(ev.Stdout))
		return nil
	})
	if err != nil {
		ch.io.printf("%s\n", termsafe.String(err.Error()))
	}
}

// answer answers an approval of the session in use.
func (ch *chat) answer(c context.Context, id string, ans agent.Answer) error {
	if ch.host == nil {
		return ch.s.Approve(id, ans)
	}
	cx, cancel := context.WithTimeout(context.WithoutCancel(c), hostAnswerTimeout)
	defer cancel()
	return ch.host.cl.Call(cx, methodAgentApprove, map[string]any{"session": ch.ss.ID, "id": id, "decision": ans.Decision, "reason": ans.Reason}, nil)
}

// hostTurn sends text to the host's session and shows the turn from its events stream
// (agent/events after the last event seen) until it ends; Ctrl-C cancels it on the host.
func (ch *chat) hostTurn(c context.Context, text string) error {
	cl, id := ch.host.cl, ch.ss.ID
	// The stream is open before the message is sent, or the turn's first live events (the
	// reasoning's and the answer's deltas) could pass before it: it starts at the last event
	// seen (or the session's first), replayed, which says it is open. The events of earlier
	// turns are not shown again: a resumed session's are skipped by their turn number.
	after, earlier := max(ch.seq-1, 0), ch.ss.Turns
	var interrupted atomic.Bool
	hook := func() bool {
		cx, cancel := context.WithTimeout(context.Background(), hostAnswerTimeout)
		defer cancel()
		interrupted.Store(true)
		return cl.Call(cx, methodAgentCancel, map[string]any{"session": id}, nil) == nil
	}
	interruptHook.Store(&hook)
	defer interruptHook.Store(nil)
	events := make(chan agent.Event, 1)
	sc, stop := context.WithCancel(c)
	defer stop()
	done := make(chan error, 1)
	go func() {
		defer close(events)
		done <- cl.Stream(sc, methodAgentEvents, map[string]any{"session": id, "after": after}, func(raw json.RawMessage) error {
			var ev agent.Event
			if err := json.Unmarshal(raw, &ev); err != nil {
				return fmt.Errorf("reading the host's events: %w", err)
			}
			select {
			case events <- ev:
			case <-sc.Done():
				return sc.Err()
			}
			if ev.Type == agent.EventTurnEnd && ev.Agent == "" && ev.Turn > earlier {
				return errTurnOver
			}
			return nil
		})
	}()
	select {
	case <-events: // the stream is open
	case err := <-done:
		ch.io.printf("%s\n", termsafe.String(fmt.Sprintf("error: %s: %v", methodAgentEvents, err)))
		return nil
	case <-c.Done():
		return nil
	}
	if err := cl.Call(c, methodAgentSend, map[string]any{"session": id, "text": text}, nil); err != nil {
		ch.io.printf("%s\n", termsafe.String("error: "+err.Error()))
		return nil
	}
	ch.ss.Turns++
	cancelled := false
	ch.show(c, func(context.Context) (agent.Event, error) {
		var ev agent.Event
		for ok := true; ; {
			if ev, ok = <-events; !ok {
				return agent.Event{}, errTurnOver
			}
			ch.seq = max(ch.seq, ev.Seq)
			if ev.Turn == 0 || ev.Turn > earlier {
				break
			}
		}
		if ev.Type == agent.EventTurnEnd && ev.End != nil && ev.End.Reason == agent.StopCancelled {
			cancelled = true
		}
		return ev, nil
	})
	stop()
	err := <-done
	switch {
	case cancelled || interrupted.Load():
		ch.io.printf("\n%s\n", ch.io.dim("(cancelled)"))
	case err != nil && !errors.Is(err, errTurnOver) && c.Err() == nil:
		ch.io.printf("\n%s\n", termsafe.String("error: "+err.Error()))
	}
	return nil
}
