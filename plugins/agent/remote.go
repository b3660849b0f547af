package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/agent/agentapi"
	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/remote"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// exposeRemote below serves the agent's remote methods, which package agentapi declares
// (their table, parameters and answers are there).

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
	case errors.Is(err, ErrBusy), errors.Is(err, ErrNothingToCompact), errors.Is(err, ErrNothingToRetry):
		code = remote.CodeConflict
	case errors.Is(err, ErrClosed):
		code = remote.CodeUnavailable
	default:
		return err
	}
	return &remoteError{code: code, err: err}
}

// lookupFunc finds the open session of an id, or fails with a remote error.
type lookupFunc func(id string) (*Session, error)

// onSession exposes m on c with h, which runs on the open session the parameters name:
// the lookup, and its not_found, are this function's.
func onSession[P agentapi.OnSession, R any](c *ctx.Context, m remote.Method[P, R], lookup lookupFunc, h func(context.Context, *Session, P) (R, error)) func() (ctx.Disposer, error) {
	return func() (ctx.Disposer, error) {
		return m.Expose(c, func(cx context.Context, p P) (R, error) {
			ss, err := lookup(p.SessionID())
			if err != nil {
				var zero R
				return zero, err
			}
			return h(cx, ss, p)
		})
	}
}

// exposeRemote exposes the agent/* methods of svc as effects of c (the main agent's scope).
// Their parameters are decoded strictly, once ([remote.Method.Expose]).
func exposeRemote(c *ctx.Context, svc *Service) error {
	lookup := lookupFunc(func(id string) (*Session, error) {
		ss, ok := svc.Lookup(id)
		if !ok {
			return nil, &remoteError{code: remote.CodeNotFound, err: fmt.Errorf("%w: %q is not open (agent/open resumes a stored one)", session.ErrUnknownSession, id)}
		}
		return ss, nil
	})
	none := struct{}{}
	// start runs a turn of ss (send or retry): the turn is the host's, on a goroutine of the
	// agent's scope (cancelled and joined when the agent unloads), not on the request's
	// context.
	start := func(ss *Session, what string, turn func(context.Context) (*session.TurnEnd, error)) error {
		if ss.Running() {
			return remoteCode(ErrBusy)
		}
		_, err := c.Go(what+" "+ss.ID(), func(cx context.Context) error {
			if _, err := turn(cx); err != nil && !errors.Is(err, ErrCancelled) && !errors.Is(err, ErrClosed) {
				svc.log.Debug("remote turn ended with an error", "session", ss.ID(), "err", err)
			}
			return nil
		})
		if err != nil {
			return remoteCode(ErrClosed)
		}
		return nil
	}
	for _, expose := range []func() (ctx.Disposer, error){
		func() (ctx.Disposer, error) {
			return agentapi.MethodAgents.Expose(c, func(context.Context, struct{}) ([]agentapi.AgentInfo, error) {
				return svc.Agents(), nil
			})
		},
		func() (ctx.Disposer, error) {
			return agentapi.MethodSessions.Expose(c, func(context.Context, struct{}) (agentapi.SessionList, error) {
				open := []session.Info{}
				for _, ss := range svc.Open() {
					open = append(open, ss.Info())
				}
				stored, err := svc.Store().List()
				if err != nil {
					return agentapi.SessionList{}, err
				}
				if stored == nil {
					stored = []session.Info{}
				}
				return agentapi.SessionList{Open: open, Stored: stored}, nil
			})
		},
		func() (ctx.Disposer, error) {
			return agentapi.MethodStart.Expose(c, func(_ context.Context, p agentapi.StartParams) (session.Info, error) {
				ss, err := svc.Start(StartOptions{Agent: p.Agent, Model: p.Model, Mode: p.Mode, Interactive: !p.Unattended})
				if err != nil {
					return session.Info{}, remoteCode(err)
				}
				return ss.Info(), nil
			})
		},
		func() (ctx.Disposer, error) {
			return agentapi.MethodOpen.Expose(c, func(_ context.Context, p agentapi.OpenParams) (session.Info, error) {
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
		onSession(c, agentapi.MethodSend, lookup, func(_ context.Context, ss *Session, p agentapi.SendParams) (struct{}, error) {
			if strings.TrimSpace(p.Text) == "" {
				return none, remote.Errorf(remote.CodeBadRequest, `"text" is empty`)
			}
			return none, start(ss, "agent/send", func(cx context.Context) (*session.TurnEnd, error) { return ss.Send(cx, p.Text) })
		}),
		onSession(c, agentapi.MethodRetry, lookup, func(_ context.Context, ss *Session, _ agentapi.SessionParams) (struct{}, error) {
			if ss.Info().Turns == 0 {
				return none, remoteCode(ErrNothingToRetry)
			}
			return none, start(ss, "agent/retry", ss.Retry)
		}),
		onSession(c, agentapi.MethodCancel, lookup, func(_ context.Context, ss *Session, _ agentapi.SessionParams) (struct{}, error) {
			ss.Cancel()
			return none, nil
		}),
		onSession(c, agentapi.MethodApprove, lookup, func(_ context.Context, ss *Session, p agentapi.ApproveParams) (struct{}, error) {
			switch p.Decision {
			case permission.Allow, permission.AllowSession, permission.Deny:
			default:
				return none, remote.Errorf(remote.CodeBadRequest, `"decision" must be %q, %q or %q, got %q`, permission.Allow, permission.AllowSession, permission.Deny, p.Decision)
			}
			return none, remoteCode(ss.Approve(p.ID, p.Answer))
		}),
		onSession(c, agentapi.MethodCallTool, lookup, func(cx context.Context, ss *Session, p agentapi.ViewCallParams) (agentapi.ViewResult, error) {
			res, err := ss.CallFromView(cx, p.ViewCall)
			switch {
			case errors.Is(err, toolregistry.ErrUnknownTool):
				return res, remote.Errorf(remote.CodeNotFound, "%v", err)
			case errors.Is(err, ErrNotForViews):
				return res, remote.Errorf(remote.CodeBadRequest, "%v", err)
			}
			return res, remoteCode(err)
		}),
		onSession(c, agentapi.MethodBackground, lookup, func(_ context.Context, ss *Session, _ agentapi.SessionParams) (struct{}, error) {
			ss.Background()
			return none, nil
		}),
		onSession(c, agentapi.MethodTasks, lookup, func(cx context.Context, ss *Session, _ agentapi.SessionParams) ([]agentapi.BackgroundTask, error) {
			return ss.BackgroundTasks(cx), nil
		}),
		onSession(c, agentapi.MethodTaskResult, lookup, func(cx context.Context, ss *Session, p agentapi.TaskParams) (agentapi.TaskResult, error) {
			res, err := ss.TaskResult(cx, p.ID)
			if errors.Is(err, ErrUnknownTask) {
				return agentapi.TaskResult{}, remote.Errorf(remote.CodeNotFound, "%v", err)
			}
			if err != nil {
				return agentapi.TaskResult{}, err
			}
			return agentapi.TaskResult{Text: res.Text(), IsError: res.IsError}, nil
		}),
		onSession(c, agentapi.MethodClose, lookup, func(_ context.Context, ss *Session, _ agentapi.SessionParams) (struct{}, error) {
			return none, remoteCode(ss.Close())
		}),
		onSession(c, agentapi.MethodCompact, lookup, func(cx context.Context, ss *Session, p agentapi.CompactParams) (session.Compaction, error) {
			comp, err := ss.Compact(cx, p.Focus)
			if err != nil {
				return session.Compaction{}, remoteCode(err)
			}
			return *comp, nil
		}),
		func() (ctx.Disposer, error) {
			return agentapi.MethodEvents.Expose(c, func(cx context.Context, p agentapi.EventsParams, send func(session.Event) error) error {
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
