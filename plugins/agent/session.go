package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/plugins/toolregistry/deferral"
	"github.com/cordisgo/harness/sampling"
)

// sessKey is the context value that carries the session a tool call runs for.
type sessKey struct{}

// FromContext returns the session a tool call (or a server request it caused) runs for:
// tools executed by an agent get it in their context.
func FromContext(cx context.Context) (*Session, bool) {
	if cx == nil {
		return nil, false
	}
	s, ok := cx.Value(sessKey{}).(*Session)
	return s, ok && s != nil
}

// Session is one conversation of an agent with a person (or a script, or a parent agent):
// its history, its event log (package session) and the turn in flight.
//
// A Session is safe for concurrent use: one goroutine runs a turn with [Session.Send]
// while others subscribe to events, answer approvals, cancel the turn or close the
// session. Turns do not overlap: Send while a turn runs fails with [ErrBusy].
type Session struct {
	svc       *Service
	agent     string
	modelName string
	parent    *Session
	depth     int
	sampler   sampling.Sampler
	ptc       bool // the session is in PTC mode
	// approvals are the questions put to the person driving the session (the root of a
	// delegation chain asks for its subagents), and the tools allowed for the session.
	approvals *permission.Approvals
	approver  toolregistry.Approver // s.approve: the approver of the session's calls
	log       *session.Log

	mu       sync.Mutex
	header   session.Header
	dir      string // the session's directory ("" when not stored)
	created  bool   // this Session made dir: Close removes it when no turn was sent
	history  []model.Message
	seqs     []int64 // seqs[i]: the sequence number of the event history[i] came from
	est      estimate
	lastText string              // the user's message of the last turn: what Retry sends again
	seen     map[string]seenFile // the project instructions as the session last saw them
	turn     int
	step     int
	cancel   context.CancelCauseFunc
	turnDone chan struct{}      // closed when the running turn ends; nil when idle
	ended    bool               // the running turn emitted its turn.end: it is winding down
	saved    map[string]string  // results kept in memory (not stored sessions)
	subUsage model.Usage        // what the running turn's subagents used, not yet in its end
	bg       map[string]*bgTask // calls' work kept in the background, by task ID (the root session's; background.go)
	closed   bool
}

func (svc *Service) newSession(d *agentDef, opts StartOptions, parent *Session, depth int) (*Session, error) {
	name := opts.Model
	if name == "" {
		name = d.cfg.Model
	}
	m, err := d.models.Get(name)
	if err != nil {
		return nil, err
	}
	info := m.Info()
	ptcMode, err := d.sessionMode(opts.Mode)
	if err != nil {
		return nil, err
	}
	s := &Session{svc: svc, agent: d.name, modelName: info.Name, parent: parent, depth: depth, ptc: ptcMode,
		approvals: permission.NewApprovals(opts.Interactive), saved: map[string]string{}}
	s.approver = toolregistry.ApproverFunc(s.approve)
	s.sampler = sampling.Func(func(cx context.Context, r *sampling.Request) (*mcpResult, error) { return s.sample(cx, r) })
	s.header = session.Header{Agent: d.name, Model: info.Name, ModelID: info.ID, Depth: depth, Profile: profileOf(d)}
	if ptcMode {
		s.header.Mode = ModePTC
	}
	return s, nil
}

// logFailed is told when the session's log file cannot be written: the session goes on
// in memory.
func (s *Session) logFailed(err error) {
	s.svc.log.Warn("agent: session log not written", "session", s.header.ID, "err", err)
}

func (svc *Service) start(d *agentDef, opts StartOptions, parent *Session, depth int) (*Session, error) {
	s, err := svc.newSession(d, opts, parent, depth)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	s.header.ID, s.header.Created = session.NewID(now), now
	if parent != nil {
		s.header.Parent = parent.header.ID
		opts.Ephemeral = opts.Ephemeral || parent.dir == ""
	}
	var file *session.File
	if !opts.Ephemeral && svc.store.Dir() != "" {
		if file, err = svc.store.Create(s.header.ID); err != nil {
			return nil, err
		}
		s.dir, s.created = svc.store.SessionDir(s.header.ID), true
	}
	s.log = session.NewLog(nil, file, s.logFailed)
	h := s.header
	s.emit(session.Event{Type: session.EventSession, Header: &h})
	if err := svc.add(s); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

func (svc *Service) resume(d *agentDef, h *session.Header, opts StartOptions) (*Session, error) {
	opts.Ephemeral = false
	s, err := svc.newSession(d, opts, nil, h.Depth)
	if err != nil {
		return nil, err
	}
	events, size, err := svc.store.ReadSize(h.ID)
	if err != nil {
		return nil, err
	}
	file, err := svc.store.Reopen(h.ID, size)
	if err != nil {
		return nil, err
	}
	s.log = session.NewLog(events, file, s.logFailed)
	s.dir = svc.store.SessionDir(h.ID)
	s.header = *h
	s.header.Model = s.modelName
	s.ptc = h.Mode == ModePTC // a session keeps the mode it was started in
	hist, seqs, open := session.View(events)
	s.history, s.seqs = hist, seqs
	s.est.reset(hist)
	for _, ev := range events {
		if ev.Type == session.EventUser {
			s.turn++
			s.lastText = ev.Text
		}
		if ev.Type == session.EventSession && ev.Header != nil && ev.Header.Resumed > s.header.Resumed {
			s.header.Resumed = ev.Header.Resumed
		}
	}
	// The tools the session's searches loaded are loaded again (calls: definitions: they
	// are in the requests' tools, and the model calls them by name).
	var found []string
	for _, ev := range events {
		if ev.Type == session.EventToolResult && ev.Call != nil && ev.Call.Tool == deferral.SearchToolName && ev.Message != nil {
			found = append(found, deferral.FoundNames(ev.Message.Content)...)
		}
	}
	if len(found) > 0 {
		d.deferrer.Load(s, found...)
	}
	if prev, now := h.Profile, profileOf(d); prev != "" && now != "" && prev != now {
		s.header.Profile = now
	}
	s.header.Resumed++
	rh := s.header
	s.emit(session.Event{Type: session.EventSession, Header: &rh})
	// Calls the log left open (the process ended mid-step) get an aborted result, so that
	// the history the model sees answers every call.
	for _, tc := range open {
		msg, ri := session.Aborted(tc, "the session ended before this call finished")
		s.emit(session.Event{Type: session.EventToolResult, Turn: s.turn, Call: &session.CallInfo{ID: tc.ID, Tool: tc.Name, Args: maskArgs(tc.Arguments)}, Result: &ri, Message: &msg})
	}
	if err := svc.add(s); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// ID returns the session's id.
func (s *Session) ID() string { return s.header.ID }

// Header describes the session.
func (s *Session) Header() session.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.header
}

// Agent returns the agent's name ("" for the main agent).
func (s *Session) Agent() string { return s.agent }

// Model returns the name of the model the session uses.
func (s *Session) Model() string { return s.modelName }

// Dir returns the session's directory in the store ("" for a session kept in memory).
func (s *Session) Dir() string { return s.dir }

// Running reports whether a turn is in flight. A turn whose end was reported
// (session.EventTurnEnd) is not: the next Send waits for it to wind down.
func (s *Session) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.turnDone != nil && !s.ended
}

// History returns a copy of the conversation as the model sees it.
func (s *Session) History() []model.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]model.Message(nil), s.history...)
}

// Events returns the durable events so far (the log's content).
func (s *Session) Events() []session.Event { return s.log.Events() }

// Info summarizes the session.
func (s *Session) Info() session.Info { return session.Summarize(s.log.Events()) }

// root returns the session at the top of the delegation chain (the one a person drives).
func (s *Session) root() *Session {
	for s.parent != nil {
		s = s.parent
	}
	return s
}

// emit records ev in the session's log (a durable event is numbered, logged and kept;
// every event reaches the subscribers), and a subagent's events reach its parent's
// subscribers too. It returns the event as recorded.
func (s *Session) emit(ev session.Event) session.Event {
	if ev.Turn == 0 && ev.Type != session.EventSession || ev.Type == session.EventTurnEnd {
		s.mu.Lock()
		if ev.Turn == 0 && ev.Type != session.EventSession {
			ev.Turn, ev.Step = s.turn, s.step
		}
		if ev.Type == session.EventTurnEnd && ev.Agent == "" {
			s.ended = true
		}
		s.mu.Unlock()
	}
	ev = s.log.Append(ev)
	if s.parent != nil && ev.Type != session.EventSession {
		fw := ev
		if fw.Agent == "" {
			fw.Agent = s.agent
		}
		s.parent.forward(fw)
	}
	return ev
}

// forward delivers a subagent's event to s's subscribers as a live event.
func (s *Session) forward(ev session.Event) {
	s.log.Deliver(ev)
	if s.parent != nil {
		s.parent.forward(ev)
	}
}

// Subscribe returns a subscription that first replays the durable events with a Seq
// above after (0: all of them), then delivers every event as it happens. A subagent's
// events arrive as live events with their Agent set.
func (s *Session) Subscribe(after int64) *session.Subscription { return s.log.Subscribe(after) }

// Cancel cancels the turn in flight, if any: the model stream stops, running tool calls
// are cancelled (servers get notifications/cancelled) and report their outcome, calls not
// yet started get an aborted result. Send then returns with [session.StopCancelled].
func (s *Session) Cancel() {
	s.mu.Lock()
	cancel := s.cancel
	s.mu.Unlock()
	if cancel != nil {
		cancel(ErrCancelled)
	}
}

// Background ends the turn in flight, if any, as Cancel does, except that running calls
// whose work can go on (tasks of MCP servers) are kept in the background instead of
// cancelled: the person stopped waiting, not the work ([Session.BackgroundTasks] lists
// them, [Session.TaskResult] waits for one). Send then returns with
// [session.StopCancelled], its error matching [ErrCancelled] and
// [toolregistry.ErrStopWaiting].
func (s *Session) Background() {
	s.mu.Lock()
	cancel := s.cancel
	s.mu.Unlock()
	if cancel != nil {
		cancel(toolregistry.ErrStopWaiting)
	}
}

// Close cancels the turn in flight, waits for it to end, ends the subscriptions and
// closes the log; the log of a session started (not resumed) here that never had a turn is
// removed. It is idempotent.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	cancel, done := s.cancel, s.turnDone
	s.mu.Unlock()
	if cancel != nil {
		cancel(ErrClosed)
		<-done
	}
	s.approvals.Close()
	s.mu.Lock()
	unused := s.created && s.turn == 0 // started and left without a message
	s.mu.Unlock()
	s.svc.remove(s)
	if d, err := s.def(); err == nil {
		d.deferrer.End(s)
	}
	err := s.log.Close()
	if unused {
		// A session nobody wrote to is not kept: `harness chat` opened and left at once
		// lists nothing.
		err = errors.Join(err, os.RemoveAll(s.dir))
	}
	return err
}

// Send runs one turn: it adds text as the user's message and lets the model work until
// it answers without calling tools, reaches the step limit or the token budget, fails, or
// the turn is cancelled (by cx or [Session.Cancel]). It returns how the turn ended; the
// error is set when the turn failed or was cancelled (matching [ErrCancelled]). Events
// report the turn as it goes.
func (s *Session) Send(cx context.Context, text string) (*session.TurnEnd, error) {
	return s.send(cx, text, false)
}

// Retry runs the last turn's message again as a new turn (/retry): after a turn that was
// cut ([session.StopIncomplete]), failed or was cancelled, or any other. The conversation
// keeps what the earlier turn added — the text shown, the results of the calls made — so
// the request extends the cached prefix and work done is not done again. It fails with
// [ErrNothingToRetry] before the first turn, and as Send does otherwise.
func (s *Session) Retry(cx context.Context) (*session.TurnEnd, error) {
	return s.send(cx, "", true)
}

func (s *Session) send(cx context.Context, text string, retry bool) (*session.TurnEnd, error) {
	tcx, release, err := s.claim(cx)
	if err != nil {
		return nil, err
	}
	defer release()
	s.mu.Lock()
	if retry {
		if s.lastText == "" {
			s.mu.Unlock()
			return nil, ErrNothingToRetry
		}
		text = s.lastText
	}
	s.lastText = text
	s.turn++
	s.step = 0
	s.mu.Unlock()
	end, err := s.runTurn(tcx, text)
	if end != nil && end.Reason == session.StopCancelled && err == nil {
		err = ErrCancelled
		if c := context.Cause(tcx); c != nil && !errors.Is(c, ErrCancelled) {
			err = fmt.Errorf("%w: %w", ErrCancelled, c)
		}
	}
	return end, err
}

// claim takes the session's turn slot for a turn (or a compaction): it waits for a turn
// that reported its end to return, fails with [ErrBusy] while another runs and with
// [ErrClosed] once the session is closed. The context returned is cancelled by
// [Session.Cancel]; release frees the slot.
func (s *Session) claim(cx context.Context) (context.Context, func(), error) {
	s.mu.Lock()
	for s.turnDone != nil && s.ended && !s.closed {
		// The previous turn reported its end and is returning: someone who saw that
		// end may send the next message at once.
		done := s.turnDone
		s.mu.Unlock()
		<-done
		s.mu.Lock()
	}
	if s.closed {
		s.mu.Unlock()
		return nil, nil, ErrClosed
	}
	if s.turnDone != nil {
		s.mu.Unlock()
		return nil, nil, ErrBusy
	}
	tcx, cancel := context.WithCancelCause(cx)
	s.cancel, s.turnDone, s.ended = cancel, make(chan struct{}), false
	s.mu.Unlock()
	return tcx, func() {
		s.mu.Lock()
		close(s.turnDone)
		s.cancel, s.turnDone = nil, nil
		s.mu.Unlock()
		cancel(nil)
	}, nil
}
