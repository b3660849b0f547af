// Package turn drives an agent's turns through the agent's remote methods (agent/*): a
// session started or opened, a message sent, the turn's events followed until it ends,
// approvals answered, the turn cancelled. It works over a remote.Caller, so the same code
// drives the agent of a running host (a *remote.Client) and the agent of a tree in this
// process (a *remote.Local): harness chat and harness ask use it both ways.
//
// # Concurrency
//
// A [Session] runs one turn at a time: [Session.Run] (or [Session.Retry]) must not be
// called again before it returns. [Session.Cancel], [Session.Approve] and [Session.Info] may be called from any
// goroutine, during a turn too (an interrupt cancels it, an approval answers it).
package turn

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/agent/agentapi"
	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/remote"
)

// AnswerTimeout bounds the calls a turn makes on the side (an approval's answer, a cancel,
// a close), which must not wait for an interrupted command's context.
const AnswerTimeout = 3 * time.Second

// ErrEnded is the error of a turn whose session closed before the turn ended.
var ErrEnded = errors.New("the session closed before the turn ended")

// errTurnOver ends the events stream of a turn that has ended.
var errTurnOver = errors.New("turn over")

// IncompleteError is the outcome of a turn that stopped before the model finished: the
// step limit, the token budget, the output limit, or an answer whose stream was cut after
// part of it (Reason says which).
type IncompleteError struct{ Reason session.StopReason }

func (e *IncompleteError) Error() string {
	return "the turn stopped before the model finished: " + string(e.Reason)
}

// Outcome is the error of a turn for which [Session.Run] (or Retry) returned end and err:
// nil when the model answered, an *[IncompleteError] when the turn stopped before it
// finished, else err (agentapi.ErrCancelled for a cancelled turn).
func Outcome(end *session.TurnEnd, err error) error {
	if end == nil || err != nil {
		return err
	}
	switch end.Reason {
	case session.StopMaxSteps, session.StopTokenBudget, session.StopLength, session.StopIncomplete:
		return &IncompleteError{Reason: end.Reason}
	}
	return nil
}

// MethodError is the refusal of one of the agent's methods (agent/start, agent/open,
// agent/send, agent/events): Err is the host's error, Method the method's name. Its text is
// the host's message (a *remote.Error's, without its code).
type MethodError struct {
	Method string
	Err    error
}

func (e *MethodError) Error() string {
	if re, ok := errors.AsType[*remote.Error](e.Err); ok {
		return re.Message
	}
	return e.Err.Error()
}
func (e *MethodError) Unwrap() error { return e.Err }

// Session is one agent session, reached through a remote.Caller.
type Session struct {
	cl remote.Caller

	mu      sync.Mutex
	info    session.Info
	seq     int64           // the last durable event of the session seen
	decided func(id string) // OnDecided's
}

// Start starts a session (agent/start).
func Start(cx context.Context, cl remote.Caller, p agentapi.StartParams) (*Session, error) {
	info, err := agentapi.MethodStart.Call(cx, cl, p)
	if err != nil {
		return nil, &MethodError{Method: agentapi.MethodStart.Name(), Err: err}
	}
	return &Session{cl: cl, info: info}, nil
}

// Open opens a stored session, or the open one (agent/open).
func Open(cx context.Context, cl remote.Caller, p agentapi.OpenParams) (*Session, error) {
	info, err := agentapi.MethodOpen.Call(cx, cl, p)
	if err != nil {
		return nil, &MethodError{Method: agentapi.MethodOpen.Name(), Err: err}
	}
	return &Session{cl: cl, info: info}, nil
}

// Info is the session as it was started or opened, its turns counted since.
func (s *Session) Info() session.Info {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info
}

// side is a context for a call on the side of cx: not cancelled with it, bounded.
func side(cx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(cx), AnswerTimeout)
}

// Close closes the session (agent/close).
func (s *Session) Close(cx context.Context) error {
	cx, cancel := side(cx)
	defer cancel()
	_, err := agentapi.MethodClose.Call(cx, s.cl, agentapi.SessionParams{Session: s.info.ID})
	return err
}

// Cancel cancels the turn in flight (agent/cancel).
func (s *Session) Cancel(cx context.Context) error {
	cx, cancel := side(cx)
	defer cancel()
	_, err := agentapi.MethodCancel.Call(cx, s.cl, agentapi.SessionParams{Session: s.info.ID})
	return err
}

// Compact summarises the session's conversation now (agent/compact), the summary giving
// particular attention to focus ("" for nothing in particular). It waits for the model's
// summary: cx bounds it.
func (s *Session) Compact(cx context.Context, focus string) (*session.Compaction, error) {
	c, err := agentapi.MethodCompact.Call(cx, s.cl, agentapi.CompactParams{Session: s.info.ID, Focus: focus})
	if err != nil {
		return nil, &MethodError{Method: agentapi.MethodCompact.Name(), Err: err}
	}
	return &c, nil
}

// Background ends the turn in flight as Cancel does, its running tasks kept in the
// background (agent/background).
func (s *Session) Background(cx context.Context) error {
	cx, cancel := side(cx)
	defer cancel()
	_, err := agentapi.MethodBackground.Call(cx, s.cl, agentapi.SessionParams{Session: s.info.ID})
	return err
}

// Tasks lists the session's calls whose work went on in the background, with their status
// now (agent/tasks).
func (s *Session) Tasks(cx context.Context) ([]agentapi.BackgroundTask, error) {
	ts, err := agentapi.MethodTasks.Call(cx, s.cl, agentapi.SessionParams{Session: s.info.ID})
	if err != nil {
		return nil, &MethodError{Method: agentapi.MethodTasks.Name(), Err: err}
	}
	return ts, nil
}

// TaskResult waits for the end of the session's background task id and returns its result
// (agent/taskResult): cx bounds the wait.
func (s *Session) TaskResult(cx context.Context, id string) (agentapi.TaskResult, error) {
	r, err := agentapi.MethodTaskResult.Call(cx, s.cl, agentapi.TaskParams{Session: s.info.ID, ID: id})
	if err != nil {
		return r, &MethodError{Method: agentapi.MethodTaskResult.Name(), Err: err}
	}
	return r, nil
}

// OnDecided sets fn to be told the ID of every approval of the session decided, by
// whoever answered it (this process, a page, another terminal), as soon as Run's stream
// brings it, ahead of the events still queued for Run's fn: a caller asking a person can
// end its question when someone else answered. fn runs on the stream's goroutine and must
// be quick; nil removes it.
func (s *Session) OnDecided(fn func(id string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.decided = fn
}

// Approve answers the session's approval id (agent/approve).
func (s *Session) Approve(cx context.Context, id string, ans permission.Answer) error {
	cx, cancel := side(cx)
	defer cancel()
	_, err := agentapi.MethodApprove.Call(cx, s.cl, agentapi.ApproveParams{Session: s.info.ID, ID: id, Answer: ans})
	return err
}

// Refuse denies the approval ev asks for, when it is the main agent's (a subagent's goes
// to its parent), telling the model reason: for a turn with nobody to ask (harness ask on a
// running host). Any other event is left alone; a turn that ended meanwhile is no error.
func (s *Session) Refuse(cx context.Context, ev session.Event, reason string) error {
	if ev.Type != session.EventApprovalAsked || ev.Approval == nil || ev.Agent != "" {
		return nil
	}
	err := s.Approve(cx, ev.Approval.ID, permission.Answer{Decision: permission.Deny, Reason: reason})
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// Run sends text as the session's next message and passes the turn's events to fn, in
// order, on the caller's goroutine, until the main agent's turn ends: the events of the
// session after sequence number after (0: from its start; the durable events up to after
// are not passed again) and of this turn, live ones included. fn answers approvals itself
// ([Session.Approve]) as it sees EventApprovalAsked.
//
// It returns how the turn ended and its error: agentapi.ErrCancelled for a cancelled turn,
// the main agent's last error for a failed one. When cx ends first, the turn is cancelled
// on the host and cx's error returned; a method the host refused is a *[MethodError].
func (s *Session) Run(cx context.Context, text string, after int64, fn func(session.Event)) (*session.TurnEnd, error) {
	return s.run(cx, after, fn, agentapi.MethodSend.Name(), func(cx context.Context, id string) error {
		_, err := agentapi.MethodSend.Call(cx, s.cl, agentapi.SendParams{Session: id, Text: text})
		return err
	})
}

// Retry runs the last turn's message again (agent/retry, /retry), as [Session.Run] runs a
// new one.
func (s *Session) Retry(cx context.Context, after int64, fn func(session.Event)) (*session.TurnEnd, error) {
	return s.run(cx, after, fn, agentapi.MethodRetry.Name(), func(cx context.Context, id string) error {
		_, err := agentapi.MethodRetry.Call(cx, s.cl, agentapi.SessionParams{Session: id})
		return err
	})
}

// run follows a turn that send starts (method names it for errors).
func (s *Session) run(cx context.Context, after int64, fn func(session.Event), method string, send func(context.Context, string) error) (*session.TurnEnd, error) {
	s.mu.Lock()
	id, earlier := s.info.ID, s.info.Turns
	after = max(after, s.seq)
	s.mu.Unlock()
	// The stream is open before the message is sent, or the turn's first live events (the
	// reasoning's and the answer's deltas) could pass before it: it starts at the event
	// before the last one seen (or at the session's first), replayed, which says it is open.
	// fresh reports the events this turn's caller has not seen: not the durable ones up to
	// after, not those of earlier turns (a resumed session's).
	fresh := func(ev session.Event) bool {
		return (ev.Seq == 0 || ev.Seq > after) && (ev.Turn == 0 || ev.Turn > earlier)
	}
	events := make(chan session.Event, 1)
	scx, stop := context.WithCancel(cx)
	defer stop()
	done := make(chan error, 1)
	go func() {
		defer close(events)
		done <- agentapi.MethodEvents.Call(scx, s.cl, agentapi.EventsParams{Session: id, After: max(after-1, 0)}, func(ev session.Event) error {
			if ev.Type == session.EventApprovalDecided && ev.Approval != nil && fresh(ev) {
				s.mu.Lock()
				decided := s.decided
				s.mu.Unlock()
				if decided != nil {
					decided(ev.Approval.ID)
				}
			}
			select {
			case events <- ev:
			case <-scx.Done():
				return scx.Err()
			}
			if ev.Type == session.EventTurnEnd && ev.Agent == "" && ev.Turn > earlier {
				return errTurnOver
			}
			return nil
		})
	}()
	// deliver passes the fresh events.
	deliver := func(ev session.Event) {
		s.mu.Lock()
		s.seq = max(s.seq, ev.Seq)
		s.mu.Unlock()
		if fresh(ev) {
			fn(ev)
		}
	}
	select {
	case ev, ok := <-events: // the stream is open
		if ok {
			deliver(ev)
		}
	case err := <-done:
		return nil, &MethodError{Method: agentapi.MethodEvents.Name(), Err: err}
	case <-cx.Done():
		return nil, cx.Err()
	}
	if err := send(cx, id); err != nil {
		if cx.Err() != nil {
			return nil, cx.Err()
		}
		return nil, &MethodError{Method: method, Err: err}
	}
	s.mu.Lock()
	s.info.Turns++
	s.mu.Unlock()
	var end *session.TurnEnd
	var turnErr error
	for ev := range events {
		deliver(ev)
		switch {
		case ev.Agent != "":
		case ev.Type == session.EventError:
			turnErr = errors.New(ev.Error)
		case ev.Type == session.EventTurnEnd && ev.End != nil && ev.Turn > earlier:
			end = ev.End
		}
	}
	err := <-done
	switch {
	case end != nil:
	case cx.Err() != nil:
		_ = s.Cancel(cx)
		return nil, cx.Err()
	case err != nil && !errors.Is(err, errTurnOver):
		return nil, &MethodError{Method: agentapi.MethodEvents.Name(), Err: err}
	default:
		return nil, ErrEnded
	}
	switch end.Reason {
	case session.StopError:
		if turnErr == nil {
			turnErr = errors.New("the turn failed")
		}
	case session.StopCancelled:
		turnErr = agentapi.ErrCancelled
	default:
		turnErr = nil
	}
	return end, turnErr
}
