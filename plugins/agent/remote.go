package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cordisgo/harness/ctx"
)

// The remote methods of the main agent, served by the remote API (plugins/remote) to the
// management page's Chat view and to other processes:
//
//	agent/agents     call   null                              → [AgentInfo]
//	agent/sessions   call   null                              → {"open": [SessionInfo], "stored": [SessionInfo]}
//	agent/start      call   {"agent", "model"}                → SessionInfo (an interactive session)
//	agent/open       call   {"session", "model"}              → SessionInfo (a stored session resumed, or the open one)
//	agent/send       call   {"session", "text"}               → {} (the turn runs in the host; follow agent/events)
//	agent/events     stream {"session", "after"}              → Event… (durable events after seq `after` replayed, then live ones; ends when the session closes)
//	agent/cancel     call   {"session"}                       → {}
//	agent/approve    call   {"session", "id", "decision", "reason"} → {}
//	agent/close      call   {"session"}                       → {}
//
// A turn started with agent/send belongs to the host, not to the request: it goes on when
// the page that sent it closes, and ends with agent/cancel, the session's close or the
// host's shutdown. Sessions started remotely are interactive: the policy's "ask" waits for
// agent/approve (from any page following the session) instead of refusing.

type remoteStartParams struct {
	Agent string `json:"agent"`
	Model string `json:"model"`
}

type remoteSessionParams struct {
	Session string `json:"session"`
	Model   string `json:"model"`
	Text    string `json:"text"`
	After   int64  `json:"after"`
	ID      string `json:"id"`
	Answer
}

// remoteError carries a remote API error code (plugins/remote duck-types RemoteCode).
type remoteError struct {
	code string
	err  error
}

func (e *remoteError) Error() string      { return e.err.Error() }
func (e *remoteError) Unwrap() error      { return e.err }
func (e *remoteError) RemoteCode() string { return e.code }

func badRequest(format string, args ...any) error {
	return &remoteError{code: "bad_request", err: fmt.Errorf(format, args...)}
}

// remoteCode classifies the agent's errors for the remote API.
func remoteCode(err error) error {
	if err == nil {
		return nil
	}
	code := ""
	switch {
	case errors.Is(err, ErrUnknownSession), errors.Is(err, ErrUnknownAgent), errors.Is(err, ErrUnknownApproval):
		code = "not_found"
	case errors.Is(err, ErrBusy):
		code = "conflict"
	case errors.Is(err, ErrClosed):
		code = "unavailable"
	default:
		return err
	}
	return &remoteError{code: code, err: err}
}

func decodeRemote[P any](raw json.RawMessage) (P, error) {
	var p P
	if len(raw) == 0 || string(raw) == "null" {
		return p, nil
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, badRequest("parameters: %v", err)
	}
	return p, nil
}

// exposeRemote exposes the agent/* methods of svc as effects of c (the main agent's scope).
func exposeRemote(c *ctx.Context, svc *Service) error {
	session := func(p remoteSessionParams) (*Session, error) {
		if p.Session == "" {
			return nil, badRequest(`"session" is required`)
		}
		ss, ok := svc.Lookup(p.Session)
		if !ok {
			return nil, &remoteError{code: "not_found", err: fmt.Errorf("%w: %q is not open (agent/open resumes a stored one)", ErrUnknownSession, p.Session)}
		}
		return ss, nil
	}
	calls := map[string]func(cx context.Context, p remoteSessionParams, raw json.RawMessage) (any, error){
		"agent/agents": func(context.Context, remoteSessionParams, json.RawMessage) (any, error) {
			return svc.Agents(), nil
		},
		"agent/sessions": func(context.Context, remoteSessionParams, json.RawMessage) (any, error) {
			open := []SessionInfo{}
			for _, ss := range svc.Open() {
				open = append(open, ss.Info())
			}
			stored, err := svc.Store().List()
			if err != nil {
				return nil, err
			}
			if stored == nil {
				stored = []SessionInfo{}
			}
			return map[string][]SessionInfo{"open": open, "stored": stored}, nil
		},
		"agent/start": func(_ context.Context, _ remoteSessionParams, raw json.RawMessage) (any, error) {
			p, err := decodeRemote[remoteStartParams](raw)
			if err != nil {
				return nil, err
			}
			ss, err := svc.Start(StartOptions{Agent: p.Agent, Model: p.Model, Interactive: true})
			if err != nil {
				return nil, remoteCode(err)
			}
			return ss.Info(), nil
		},
		"agent/open": func(_ context.Context, p remoteSessionParams, _ json.RawMessage) (any, error) {
			if ss, ok := svc.Lookup(p.Session); ok {
				return ss.Info(), nil
			}
			if p.Session == "" {
				return nil, badRequest(`"session" is required`)
			}
			ss, err := svc.Resume(p.Session, StartOptions{Model: p.Model, Interactive: true})
			if err != nil {
				return nil, remoteCode(err)
			}
			return ss.Info(), nil
		},
		"agent/send": func(_ context.Context, p remoteSessionParams, _ json.RawMessage) (any, error) {
			ss, err := session(p)
			if err != nil {
				return nil, err
			}
			if strings.TrimSpace(p.Text) == "" {
				return nil, badRequest(`"text" is empty`)
			}
			if ss.Running() {
				return nil, remoteCode(ErrBusy)
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
				return nil, remoteCode(ErrClosed)
			}
			return struct{}{}, nil
		},
		"agent/cancel": func(_ context.Context, p remoteSessionParams, _ json.RawMessage) (any, error) {
			ss, err := session(p)
			if err != nil {
				return nil, err
			}
			ss.Cancel()
			return struct{}{}, nil
		},
		"agent/approve": func(_ context.Context, p remoteSessionParams, _ json.RawMessage) (any, error) {
			ss, err := session(p)
			if err != nil {
				return nil, err
			}
			switch p.Decision {
			case DecisionAllow, DecisionAllowSession, DecisionDeny:
			default:
				return nil, badRequest(`"decision" must be %q, %q or %q, got %q`, DecisionAllow, DecisionAllowSession, DecisionDeny, p.Decision)
			}
			return struct{}{}, remoteCode(ss.Approve(p.ID, p.Answer))
		},
		"agent/close": func(_ context.Context, p remoteSessionParams, _ json.RawMessage) (any, error) {
			ss, err := session(p)
			if err != nil {
				return nil, err
			}
			return struct{}{}, remoteCode(ss.Close())
		},
	}
	for name, fn := range calls {
		_, err := c.ExposeRemote(ctx.RemoteMethod{Name: name, Call: func(cx context.Context, raw json.RawMessage) (any, error) {
			p, err := decodeRemote[remoteSessionParams](raw)
			if err != nil && name != "agent/start" {
				return nil, err
			}
			return fn(cx, p, raw)
		}})
		if err != nil {
			return err
		}
	}
	_, err := c.ExposeRemote(ctx.RemoteMethod{Name: "agent/events", Stream: func(cx context.Context, raw json.RawMessage, send func(any) error) error {
		p, err := decodeRemote[remoteSessionParams](raw)
		if err != nil {
			return err
		}
		ss, err := session(p)
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
	}})
	return err
}
