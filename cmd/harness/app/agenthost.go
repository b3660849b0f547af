package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/cordisgo/harness/internal/termsafe"
	"github.com/cordisgo/harness/plugins/agent"
	"github.com/cordisgo/harness/plugins/remote"
)

// errTurnOver ends the events stream of a turn that has ended.
var errTurnOver = errors.New("turn over")

// runningAgentHost returns the running host whose agent a turn can use, or nil: no host (or
// --local, or a profile given on the command line), or a host without an agent, said in one
// line, or a choice the host's agent cannot honour (--mode, --allow: its permissions are
// its own), said in one line too.
func (a *invocation) runningAgentHost(cx context.Context, f agentFlags) (*runningHost, error) {
	rh, err := a.findHost(cx, a.fwd)
	if err != nil || rh == nil {
		return nil, err
	}
	switch {
	case !rh.serves(agent.MethodStart.Name()):
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
func (a *invocation) askOnHost(pcx context.Context, rh *runningHost, f agentFlags, task string) error {
	cl := rh.cl
	info, err := agent.MethodStart.Call(pcx, cl, agent.StartParams{Agent: f.agent, Model: f.model})
	if err != nil {
		return a.agentHostError(pcx, rh, agent.MethodStart.Name(), err)
	}
	bg := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.WithoutCancel(pcx), hostAnswerTimeout)
	}
	defer func() {
		cx, cancel := bg()
		defer cancel()
		_, _ = agent.MethodClose.Call(cx, cl, agent.SessionParams{Session: info.ID})
	}()
	enc := json.NewEncoder(a.stdout)
	var end *agent.TurnEnd
	var turnErr, sendErr error
	sent := false
	err = agent.MethodEvents.Call(pcx, cl, agent.EventsParams{Session: info.ID}, func(ev agent.Event) error {
		if !sent {
			// The stream is open (its first event is the session's header): the task is sent
			// now, so that none of the turn's live events (--json shows them) passes before.
			sent = true
			if _, sendErr = agent.MethodSend.Call(pcx, cl, agent.SendParams{Session: info.ID, Text: task}); sendErr != nil {
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
			answer := agent.ApproveParams{Session: info.ID, ID: ev.Approval.ID, Answer: agent.Answer{Decision: agent.DecisionDeny,
				Reason: "nobody to ask (harness ask); run harness chat to approve calls, or ask --local --allow PATTERN"}}
			if _, err := agent.MethodApprove.Call(cx, cl, answer); err != nil && !errors.Is(err, context.Canceled) {
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
		return a.agentHostError(pcx, rh, agent.MethodSend.Name(), sendErr)
	case pcx.Err() != nil:
		cx, cancel := bg()
		defer cancel()
		_, _ = agent.MethodCancel.Call(cx, cl, agent.SessionParams{Session: info.ID})
		return failure(errors.New("interrupted"))
	case err != nil:
		return failure(rh.explain(pcx, "", err))
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
func (a *invocation) agentHostError(cx context.Context, rh *runningHost, method string, err error) error {
	if cx.Err() != nil {
		return failure(errors.New("interrupted"))
	}
	return agentError(fmt.Errorf("%s: %s: %w", rh, method, err))
}

// hostSession starts (agent/start, agent.StartParams) or opens (agent/open, chat --resume
// and /resume, agent.OpenParams) a session on the host and makes it the chat's.
func hostSession[P any](ch *chat, method remote.Method[P, agent.SessionInfo], params P) error {
	cx, cancel := context.WithTimeout(context.Background(), hostAnswerTimeout)
	defer cancel()
	info, err := method.Call(cx, ch.host.cl, params)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", ch.host, method, err)
	}
	ch.close()
	ch.ss, ch.seq = &info, 0
	ch.banner(info.Agent, info.Model, info.ID)
	return nil
}

// answer answers an approval of the session in use.
func (ch *chat) answer(pcx context.Context, id string, ans agent.Answer) error {
	if ch.host == nil {
		return ch.s.Approve(id, ans)
	}
	cx, cancel := context.WithTimeout(context.WithoutCancel(pcx), hostAnswerTimeout)
	defer cancel()
	_, err := agent.MethodApprove.Call(cx, ch.host.cl, agent.ApproveParams{Session: ch.ss.ID, ID: id, Answer: ans})
	return err
}

// hostTurn sends text to the host's session and shows the turn from its events stream
// (agent/events after the last event seen) until it ends; Ctrl-C cancels it on the host.
func (ch *chat) hostTurn(pcx context.Context, text string) error {
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
		_, err := agent.MethodCancel.Call(cx, cl, agent.SessionParams{Session: id})
		return err == nil
	}
	interruptHook.Store(&hook)
	defer interruptHook.Store(nil)
	events := make(chan agent.Event, 1)
	scx, stop := context.WithCancel(pcx)
	defer stop()
	done := make(chan error, 1)
	go func() {
		defer close(events)
		done <- agent.MethodEvents.Call(scx, cl, agent.EventsParams{Session: id, After: after}, func(ev agent.Event) error {
			select {
			case events <- ev:
			case <-scx.Done():
				return scx.Err()
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
		ch.io.printf("%s\n", termsafe.String(fmt.Sprintf("error: %s: %v", agent.MethodEvents, err)))
		return nil
	case <-pcx.Done():
		return nil
	}
	if _, err := agent.MethodSend.Call(pcx, cl, agent.SendParams{Session: id, Text: text}); err != nil {
		ch.io.printf("%s\n", termsafe.String("error: "+err.Error()))
		return nil
	}
	ch.ss.Turns++
	cancelled := false
	ch.show(pcx, func(context.Context) (agent.Event, error) {
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
	case err != nil && !errors.Is(err, errTurnOver) && pcx.Err() == nil:
		ch.io.printf("\n%s\n", termsafe.String("error: "+err.Error()))
	}
	return nil
}
