package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/remote"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// The remote methods of the main agent, served by the remote API (plugins/remote) to the
// management page's Chat view and to other processes:
//
//	agent/agents     call   null           → []AgentInfo
//	agent/sessions   call   null           → SessionList
//	agent/start      call   StartParams    → session.Info (an interactive session, unless unattended)
//	agent/open       call   OpenParams     → session.Info (a stored session resumed, or the open one)
//	agent/send       call   SendParams     → {} (the turn runs in the host; follow agent/events)
//	agent/events     stream EventsParams   → Event… (durable events after seq `after` replayed, then live ones; ends when the session closes)
//	agent/cancel     call   SessionParams  → {}
//	agent/approve    call   ApproveParams  → {}
//	agent/close      call   SessionParams  → {}
//	agent/compact    call   CompactParams  → session.Compaction (the history summarised now; conflict while a turn runs)
//	agent/callTool   call   ViewCallParams → ViewResult (a call made by a tool's view shown in the session)
//
// A turn started with agent/send belongs to the host, not to the request: it goes on when
// the page that sent it closes, and ends with agent/cancel, the session's close or the
// host's shutdown. Sessions started remotely are interactive: the policy's "ask" waits for
// agent/approve (from any page following the session) instead of refusing.

// The agent's remote methods, each declared once with its parameters and answer (the
// table above): the agent serves them and clients call them through these values.
var (
	MethodAgents   = remote.NewMethod[struct{}, []AgentInfo]("agent/agents")
	MethodSessions = remote.NewMethod[struct{}, SessionList]("agent/sessions")
	MethodStart    = remote.NewMethod[StartParams, session.Info]("agent/start")
	MethodOpen     = remote.NewMethod[OpenParams, session.Info]("agent/open")
	MethodSend     = remote.NewMethod[SendParams, struct{}]("agent/send")
	MethodEvents   = remote.NewStreamMethod[EventsParams, session.Event]("agent/events")
	MethodCancel   = remote.NewMethod[SessionParams, struct{}]("agent/cancel")
	MethodApprove  = remote.NewMethod[ApproveParams, struct{}]("agent/approve")
	MethodClose    = remote.NewMethod[SessionParams, struct{}]("agent/close")
	MethodCompact  = remote.NewMethod[CompactParams, session.Compaction]("agent/compact")
	MethodCallTool = remote.NewMethod[ViewCallParams, ViewResult]("agent/callTool")
)

// CompactParams are the parameters of agent/compact: the session, and what the summary
// must give particular attention to ("" for nothing in particular).
type CompactParams struct {
	Session string `json:"session"`
	Focus   string `json:"focus,omitempty"`
}

// Validate requires the session.
func (p CompactParams) Validate() error { return requireSession(p.Session) }

// StartParams are the parameters of agent/start: the agent ("" the main one), the model
// ("" the agent's), the mode ("" the agent's; see [StartOptions.Mode]) and whether nobody
// answers approvals (Unattended: calls that need one are refused, the model told why, as
// harness ask does in process); sessions started remotely are interactive otherwise.
type StartParams struct {
	Agent      string `json:"agent"`
	Model      string `json:"model"`
	Mode       string `json:"mode,omitempty"`
	Unattended bool   `json:"unattended,omitempty"`
}

// SessionParams name an open session: the parameters of agent/cancel and agent/close.
type SessionParams struct {
	Session string `json:"session"`
}

// OpenParams are the parameters of agent/open: a stored session resumed with the model
// ("" its own), the mode and whether nobody answers approvals (as in [StartParams]), or
// the open one.
type OpenParams struct {
	Session    string `json:"session"`
	Model      string `json:"model"`
	Mode       string `json:"mode,omitempty"`
	Unattended bool   `json:"unattended,omitempty"`
}

// SendParams are the parameters of agent/send: the text of the session's next turn.
type SendParams struct {
	Session string `json:"session"`
	Text    string `json:"text"`
}

// EventsParams are the parameters of agent/events: the session, and the sequence number
// after which its durable events are replayed.
type EventsParams struct {
	Session string `json:"session"`
	After   int64  `json:"after"`
}

// ApproveParams are the parameters of agent/approve: the answer to the session's approval
// ID.
type ApproveParams struct {
	Session string `json:"session"`
	ID      string `json:"id"`
	permission.Answer
}

// SessionList is the answer of agent/sessions.
type SessionList struct {
	Open   []session.Info `json:"open"`
	Stored []session.Info `json:"stored"`
}

// Validate requires the session.
func (p SessionParams) Validate() error { return requireSession(p.Session) }

// Validate requires the session.
func (p OpenParams) Validate() error { return requireSession(p.Session) }

// Validate requires the session.
func (p SendParams) Validate() error { return requireSession(p.Session) }

// Validate requires the session.
func (p EventsParams) Validate() error { return requireSession(p.Session) }

// Validate requires the session.
func (p ApproveParams) Validate() error { return requireSession(p.Session) }

func requireSession(id string) error {
	var p ctx.Problems
	p.Require("session", id, "the session's id")
	return p.Err()
}

// remoteError carries a remote API error code, keeping the agent's error for errors.Is.
type remoteError struct {
	code remote.Code
	err  error
}

func (e *remoteError) Error() string           { return e.err.Error() }
func (e *remoteError) Unwrap() error           { return e.err }
func (e *remoteError) RemoteCode() remote.Code { return e.code }

// remoteCode classifies the agent's errors for the remote API.
func remoteCode(err error) error {
	if err == nil {
		return nil
	}
	var code remote.Code
	switch {
	case errors.Is(err, session.ErrUnknownSession), errors.Is(err, ErrUnknownAgent), errors.Is(err, permission.ErrUnknownApproval):
		code = remote.CodeNotFound
	case errors.Is(err, ErrBusy), errors.Is(err, ErrNothingToCompact):
		code = remote.CodeConflict
	case errors.Is(err, ErrClosed):
		code = remote.CodeUnavailable
	default:
		return err
	}
	return &remoteError{code: code, err: err}
}

// exposeRemote exposes the agent/* methods of svc as effects of c (the main agent's scope).
// Their parameters are decoded strictly, once ([remote.Method.Expose]).
func exposeRemote(c *ctx.Context, svc *Service) error {
	lookup := func(id string) (*Session, error) {
		ss, ok := svc.Lookup(id)
		if !ok {
			return nil, &remoteError{code: remote.CodeNotFound, err: fmt.Errorf("%w: %q is not open (agent/open resumes a stored one)", session.ErrUnknownSession, id)}
		}
		return ss, nil
	}
	none := struct{}{}
	for _, expose := range []func() (ctx.Disposer, error){
		func() (ctx.Disposer, error) {
			return MethodAgents.Expose(c, func(context.Context, struct{}) ([]AgentInfo, error) {
				return svc.Agents(), nil
			})
		},
		func() (ctx.Disposer, error) {
			return MethodSessions.Expose(c, func(context.Context, struct{}) (SessionList, error) {
				open := []session.Info{}
				for _, ss := range svc.Open() {
					open = append(open, ss.Info())
				}
				stored, err := svc.Store().List()
				if err != nil {
					return SessionList{}, err
				}
				if stored == nil {
					stored = []session.Info{}
				}
				return SessionList{Open: open, Stored: stored}, nil
			})
		},
		func() (ctx.Disposer, error) {
			return MethodStart.Expose(c, func(_ context.Context, p StartParams) (session.Info, error) {
				ss, err := svc.Start(StartOptions{Agent: p.Agent, Model: p.Model, Mode: p.Mode, Interactive: !p.Unattended})
				if err != nil {
					return session.Info{}, remoteCode(err)
				}
				return ss.Info(), nil
			})
		},
		func() (ctx.Disposer, error) {
			return MethodOpen.Expose(c, func(_ context.Context, p OpenParams) (session.Info, error) {
				id, err := svc.Store().Resolve(p.Session)
				if err != nil {
					return session.Info{}, remoteCode(err)
				}
				if ss, ok := svc.Lookup(id); ok {
					return ss.Info(), nil
				}
				ss, err := svc.Resume(id, StartOptions{Model: p.Model, Mode: p.Mode, Interactive: !p.Unattended})
				if err != nil {
					return session.Info{}, remoteCode(err)
				}
				return ss.Info(), nil
			})
		},
		func() (ctx.Disposer, error) {
			return MethodSend.Expose(c, func(_ context.Context, p SendParams) (struct{}, error) {
				ss, err := lookup(p.Session)
				if err != nil {
					return none, err
				}
				if strings.TrimSpace(p.Text) == "" {
					return none, remote.Errorf(remote.CodeBadRequest, `"text" is empty`)
				}
				if ss.Running() {
					return none, remoteCode(ErrBusy)
				}
				// The turn is the host's: it runs on a goroutine of the agent's scope (cancelled
				// and joined when the agent unloads), not on the request's context.
				_, err = c.Go("agent/send "+ss.ID(), func(cx context.Context) error {
					if _, err := ss.Send(cx, p.Text); err != nil && !errors.Is(err, ErrCancelled) && !errors.Is(err, ErrClosed) {
						svc.log.Debug("remote turn ended with an error", "session", ss.ID(), "err", err)
					}
					return nil
				})
				if err != nil {
					return none, remoteCode(ErrClosed)
				}
				return none, nil
			})
		},
		func() (ctx.Disposer, error) {
			return MethodCancel.Expose(c, func(_ context.Context, p SessionParams) (struct{}, error) {
				ss, err := lookup(p.Session)
				if err != nil {
					return none, err
				}
				ss.Cancel()
				return none, nil
			})
		},
		func() (ctx.Disposer, error) {
			return MethodApprove.Expose(c, func(_ context.Context, p ApproveParams) (struct{}, error) {
				ss, err := lookup(p.Session)
				if err != nil {
					return none, err
				}
				switch p.Decision {
				case permission.Allow, permission.AllowSession, permission.Deny:
				default:
					return none, remote.Errorf(remote.CodeBadRequest, `"decision" must be %q, %q or %q, got %q`, permission.Allow, permission.AllowSession, permission.Deny, p.Decision)
				}
				return none, remoteCode(ss.Approve(p.ID, p.Answer))
			})
		},
		func() (ctx.Disposer, error) {
			return MethodCallTool.Expose(c, func(cx context.Context, p ViewCallParams) (ViewResult, error) {
				ss, err := lookup(p.Session)
				if err != nil {
					return ViewResult{}, err
				}
				res, err := ss.CallFromView(cx, p.ViewCall)
				switch {
				case errors.Is(err, toolregistry.ErrUnknownTool):
					return res, remote.Errorf(remote.CodeNotFound, "%v", err)
				case errors.Is(err, ErrNotForViews):
					return res, remote.Errorf(remote.CodeBadRequest, "%v", err)
				}
				return res, remoteCode(err)
			})
		},
		func() (ctx.Disposer, error) {
			return MethodClose.Expose(c, func(_ context.Context, p SessionParams) (struct{}, error) {
				ss, err := lookup(p.Session)
				if err != nil {
					return none, err
				}
				return none, remoteCode(ss.Close())
			})
		},
		func() (ctx.Disposer, error) {
			return MethodCompact.Expose(c, func(cx context.Context, p CompactParams) (session.Compaction, error) {
				ss, err := lookup(p.Session)
				if err != nil {
					return session.Compaction{}, err
				}
				comp, err := ss.Compact(cx, p.Focus)
				if err != nil {
					return session.Compaction{}, remoteCode(err)
				}
				return *comp, nil
			})
		},
		func() (ctx.Disposer, error) {
			return MethodEvents.Expose(c, func(cx context.Context, p EventsParams, send func(session.Event) error) error {
				ss, err := lookup(p.Session)
				if err != nil {
					return err
				}
				sub := ss.Subscribe(p.After)
				defer sub.Close()
				for {
					ev, err := sub.Next(cx)
					if err != nil {
						if cx.Err() != nil || errors.Is(err, ErrClosed) {
							return nil // the client went away, or the session closed: the stream ends
						}
						return remoteCode(err)
					}
					if err := send(ev); err != nil {
						return err
					}
				}
			})
		},
	} {
		if _, err := expose(); err != nil {
			return err
		}
	}
	return nil
}
