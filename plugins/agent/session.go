package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/cordisgo/harness/plugins/model"
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
// its history, its event log and the turn in flight.
//
// A Session is safe for concurrent use: one goroutine runs a turn with [Session.Send]
// while others subscribe to events, answer approvals, cancel the turn or close the
// session. Turns do not overlap: Send while a turn runs fails with [ErrBusy].
type Session struct {
	svc         *Service
	agent       string
	modelName   string
	parent      *Session
	depth       int
	interactive bool
	sampler     sampling.Sampler
	ptc         bool // the session is in PTC mode

	mu        sync.Mutex
	header    Header
	log       *logFile
	dir       string // the session's directory ("" when not stored)
	created   bool   // this Session made dir: Close removes it when no turn was sent
	history   []model.Message
	events    []Event
	seq       int64
	turn      int
	step      int
	cancel    context.CancelCauseFunc
	turnDone  chan struct{} // closed when the running turn ends; nil when idle
	subs      map[*Subscription]struct{}
	pending   map[string]*pendingApproval
	approvals int
	grants    map[string]bool
	saved     map[string]string // results kept in memory (not stored sessions)
	closed    bool
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
		interactive: opts.Interactive, subs: map[*Subscription]struct{}{}, pending: map[string]*pendingApproval{},
		grants: map[string]bool{}, saved: map[string]string{}}
	s.sampler = sampling.Func(func(cx context.Context, r *sampling.Request) (*mcpResult, error) { return s.sample(cx, r) })
	s.header = Header{Agent: d.name, Model: info.Name, ModelID: info.ID, Depth: depth}
	if ptcMode {
		s.header.Mode = ModePTC
	}
	return s, nil
}

func (svc *Service) start(d *agentDef, opts StartOptions, parent *Session, depth int) (*Session, error) {
	s, err := svc.newSession(d, opts, parent, depth)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	s.header.ID, s.header.Created = newID(now), now
	if parent != nil {
		s.header.Parent = parent.header.ID
		opts.Ephemeral = opts.Ephemeral || parent.dir == ""
	}
	if !opts.Ephemeral && svc.store.dir != "" {
		if s.log, err = svc.store.create(s.header.ID); err != nil {
			return nil, err
		}
		s.dir, s.created = svc.store.SessionDir(s.header.ID), true
	}
	h := s.header
	s.emit(Event{Type: EventSession, Header: &h})
	if err := svc.add(s); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

func (svc *Service) resume(d *agentDef, h *Header, events []Event, opts StartOptions) (*Session, error) {
	opts.Ephemeral = false
	s, err := svc.newSession(d, opts, nil, h.Depth)
	if err != nil {
		return nil, err
	}
	_, size, err := svc.store.read(h.ID)
	if err != nil {
		return nil, err
	}
	if s.log, err = svc.store.reopen(h.ID, size); err != nil {
		return nil, err
	}
	s.dir = svc.store.SessionDir(h.ID)
	s.header = *h
	s.header.Model = s.modelName
	s.ptc = h.Mode == ModePTC // a session keeps the mode it was started in
	hist, open := rebuild(events)
	s.history = hist
	s.events = events
	s.seq = events[len(events)-1].Seq
	for _, ev := range events {
		if ev.Type == EventUser {
			s.turn++
		}
		if ev.Type == EventSession && ev.Header != nil && ev.Header.Resumed > s.header.Resumed {
			s.header.Resumed = ev.Header.Resumed
		}
	}
	s.header.Resumed++
	rh := s.header
	s.emit(Event{Type: EventSession, Header: &rh})
	// Calls the log left open (the process ended mid-step) get an aborted result, so that
	// the history the model sees answers every call.
	for _, tc := range open {
		msg, ri := abortedResult(tc, "the session ended before this call finished")
		s.emit(Event{Type: EventToolResult, Turn: s.turn, Call: &CallInfo{ID: tc.ID, Tool: tc.Name, Args: maskArgs(tc.Arguments)}, Result: &ri, Message: &msg})
	}
	if err := svc.add(s); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// rebuild returns the model history of a log's events, and the calls of the last
// assistant message that have no result. Results are put in the order of the calls;
// calls left open before a later message get an aborted result.
func rebuild(events []Event) (hist []model.Message, open []model.ToolCall) {
	var calls []model.ToolCall
	got := map[string]model.Message{}
	flush := func(final bool) {
		for _, tc := range calls {
			if m, ok := got[tc.ID]; ok {
				hist = append(hist, m)
				continue
			}
			if final {
				open = append(open, tc)
			}
			m, _ := abortedResult(tc, "the session ended before this call finished")
			hist = append(hist, m)
		}
		calls = nil
		clear(got)
	}
	for i := range events {
		ev := &events[i]
		switch ev.Type {
		case EventUser:
			flush(false)
			hist = append(hist, model.Message{Role: model.RoleUser, Content: ev.Text})
		case EventAssistant:
			if ev.Message == nil {
				continue
			}
			flush(false)
			hist = append(hist, *ev.Message)
			calls = ev.Message.ToolCalls
		case EventToolResult:
			if ev.Message != nil && ev.Call != nil {
				got[ev.Call.ID] = *ev.Message
			}
		}
	}
	flush(true)
	return hist, open
}

// ID returns the session's id.
func (s *Session) ID() string { return s.header.ID }

// Header describes the session.
func (s *Session) Header() Header {
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

// Running reports whether a turn is in flight.
func (s *Session) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.turnDone != nil
}

// History returns a copy of the conversation as the model sees it.
func (s *Session) History() []model.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]model.Message(nil), s.history...)
}

// Events returns the durable events so far (the log's content).
func (s *Session) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Event(nil), s.events...)
}

// Info summarizes the session.
func (s *Session) Info() SessionInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	info := SessionInfo{ID: s.header.ID}
	summarize(&info, s.events)
	return info
}

// root returns the session at the top of the delegation chain (the one a person drives).
func (s *Session) root() *Session {
	for s.parent != nil {
		s = s.parent
	}
	return s
}

// emit records ev: a durable event gets the next Seq, is logged and kept; every event is
// delivered to the subscribers, and a subagent's events to its parent's subscribers too.
func (s *Session) emit(ev Event) {
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	s.mu.Lock()
	if ev.Turn == 0 && ev.Type != EventSession {
		ev.Turn, ev.Step = s.turn, s.step
	}
	if ev.Type.Durable() {
		s.seq++
		ev.Seq = s.seq
		s.events = append(s.events, ev)
		if s.log != nil {
			if err := s.log.write(&ev); err != nil {
				s.svc.log.Warn("agent: session log not written", "session", s.header.ID, "err", err)
				s.log = nil
			}
		}
	} else {
		ev.Seq = s.seq
	}
	for sub := range s.subs {
		sub.push(ev)
	}
	s.mu.Unlock()
	if s.parent != nil && ev.Type != EventSession {
		fw := ev
		if fw.Agent == "" {
			fw.Agent = s.agent
		}
		s.parent.forward(fw)
	}
}

// forward delivers a subagent's event to s's subscribers as a live event.
func (s *Session) forward(ev Event) {
	s.mu.Lock()
	ev.Seq = s.seq
	for sub := range s.subs {
		sub.push(ev)
	}
	s.mu.Unlock()
	if s.parent != nil {
		s.parent.forward(ev)
	}
}

// Subscription receives a session's events in order. Events are queued without bound
// for a subscriber that falls behind, so a subscriber must keep reading or Close.
//
// A Subscription is safe for concurrent use, though events are meant for one reader.
type Subscription struct {
	s     *Session
	queue []Event
	wake  chan struct{}
	done  bool
}

// Subscribe returns a subscription that first replays the durable events with a Seq
// above after (0: all of them), then delivers every event as it happens. A subagent's
// events arrive as live events with their Agent set.
func (s *Session) Subscribe(after int64) *Subscription {
	sub := &Subscription{s: s, wake: make(chan struct{}, 1)}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ev := range s.events {
		if ev.Seq > after {
			sub.queue = append(sub.queue, ev)
		}
	}
	if s.closed {
		sub.done = true
	} else {
		s.subs[sub] = struct{}{}
	}
	if len(sub.queue) > 0 || sub.done {
		sub.signal()
	}
	return sub
}

func (sub *Subscription) signal() {
	select {
	case sub.wake <- struct{}{}:
	default:
	}
}

// push queues ev; s.mu is held.
func (sub *Subscription) push(ev Event) {
	sub.queue = append(sub.queue, ev)
	sub.signal()
}

// Next returns the next event. It blocks until there is one, cx is done (cx's error), or
// the session is closed and every event was read ([ErrClosed]).
func (sub *Subscription) Next(cx context.Context) (Event, error) {
	for {
		sub.s.mu.Lock()
		if len(sub.queue) > 0 {
			ev := sub.queue[0]
			sub.queue[0] = Event{}
			sub.queue = sub.queue[1:]
			sub.s.mu.Unlock()
			return ev, nil
		}
		done := sub.done
		sub.s.mu.Unlock()
		if done {
			return Event{}, ErrClosed
		}
		select {
		case <-sub.wake:
		case <-cx.Done():
			return Event{}, cx.Err()
		}
	}
}

// Close ends the subscription; Next then returns ErrClosed once the queue is read.
func (sub *Subscription) Close() {
	sub.s.mu.Lock()
	delete(sub.s.subs, sub)
	sub.done = true
	sub.signal()
	sub.s.mu.Unlock()
}

// Cancel cancels the turn in flight, if any: the model stream stops, running tool calls
// are cancelled (servers get notifications/cancelled) and report their outcome, calls not
// yet started get an aborted result. Send then returns with [StopCancelled].
func (s *Session) Cancel() {
	s.mu.Lock()
	cancel := s.cancel
	s.mu.Unlock()
	if cancel != nil {
		cancel(ErrCancelled)
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
	s.mu.Lock()
	for sub := range s.subs {
		sub.done = true
		sub.signal()
	}
	clear(s.subs)
	for id, p := range s.pending {
		close(p.gone)
		delete(s.pending, id)
	}
	lf := s.log
	s.log = nil
	unused := s.created && s.turn == 0 // started and left without a message
	s.mu.Unlock()
	s.svc.remove(s)
	if d, err := s.def(); err == nil {
		d.deferrer.End(s)
	}
	if lf == nil {
		return nil
	}
	err := lf.close()
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
func (s *Session) Send(cx context.Context, text string) (*TurnEnd, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	if s.turnDone != nil {
		s.mu.Unlock()
		return nil, ErrBusy
	}
	tcx, cancel := context.WithCancelCause(cx)
	s.cancel, s.turnDone = cancel, make(chan struct{})
	s.turn++
	s.step = 0
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		close(s.turnDone)
		s.cancel, s.turnDone = nil, nil
		s.mu.Unlock()
		cancel(nil)
	}()
	end, err := s.runTurn(tcx, text)
	if end != nil && end.Reason == StopCancelled && err == nil {
		err = ErrCancelled
		if c := context.Cause(tcx); c != nil && !errors.Is(c, ErrCancelled) {
			err = fmt.Errorf("%w: %w", ErrCancelled, c)
		}
	}
	return end, err
}
