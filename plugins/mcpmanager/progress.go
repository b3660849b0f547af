package mcpmanager

import (
	"context"
	"strconv"
	"sync"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient"
)

// CallProgress is one value of the mcpManager/progress stream: the latest progress of a
// request in flight on one of the tree's MCP clients (managed servers and profile rows
// alike), or, with Done set, its end. It is a plain value.
type CallProgress struct {
	// ID identifies the request in the stream: the client's scope and its progress token.
	ID string `json:"id"`
	mcpclient.Progress
}

// progressHub keeps the latest progress of every request in flight (from
// mcpclient.ProgressEvent) and fans it out to the mcpManager/progress streams. A stream
// that reads slowly gets each request's latest value, not every intermediate one, and
// never misses a Done. It is safe for concurrent use.
type progressHub struct {
	mu     sync.Mutex
	calls  map[string]CallProgress // in flight, by ID
	order  []string                // IDs in calls, oldest first
	ended  map[string]struct{}     // IDs whose Done was seen (the last endedKept)
	endedQ []string                // ended, oldest first
	subs   map[*progressSub]struct{}
	closed bool
}

// endedKept bounds how many ended requests the hub remembers, so that a progress
// notification arriving after its request's end (the client's notification handler and the
// call's end race) never brings the request back. Tokens are not reused, so a late value of
// an ID older than that is as stale, and rare: it would only linger until its client goes.
const endedKept = 4096

// progressSub is one stream's pending values, coalesced by ID.
type progressSub struct {
	wake    chan struct{} // buffered 1: something is pending, or the hub closed
	pending map[string]CallProgress
	order   []string
	closed  bool
}

func progressID(p mcpclient.Progress) string {
	id := "?"
	if p.Scope != nil {
		id = strconv.FormatUint(p.Scope.ID(), 10)
	}
	return id + "/" + p.Token
}

// on is the mcpclient.ProgressEvent listener: it only updates maps and never blocks.
func (h *progressHub) on(p mcpclient.Progress) error {
	cp := CallProgress{ID: progressID(p), Progress: p}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	if _, ended := h.ended[cp.ID]; ended {
		return nil // late: its request is over
	}
	if _, ok := h.calls[cp.ID]; !ok && !p.Done {
		h.order = append(h.order, cp.ID)
	}
	if p.Done {
		delete(h.calls, cp.ID)
		h.order = deleteID(h.order, cp.ID)
		if h.ended == nil {
			h.ended = map[string]struct{}{}
		}
		h.ended[cp.ID] = struct{}{}
		if h.endedQ = append(h.endedQ, cp.ID); len(h.endedQ) > endedKept {
			delete(h.ended, h.endedQ[0])
			h.endedQ = h.endedQ[1:]
		}
	} else {
		h.calls[cp.ID] = cp
	}
	for s := range h.subs {
		s.offerLocked(cp)
	}
	return nil
}

// onStatus ends the calls of a client that is disposed, should their Done never come.
func (h *progressHub) onStatus(st mcpclient.Status) error {
	if st.Phase != mcpclient.PhaseDisposed || st.Scope == nil {
		return nil
	}
	h.mu.Lock()
	var gone []mcpclient.Progress
	for _, id := range h.order {
		if cp := h.calls[id]; cp.Scope == st.Scope {
			gone = append(gone, cp.Progress)
		}
	}
	h.mu.Unlock()
	for _, p := range gone {
		p.Done, p.Err = true, "the server's client was disposed"
		_ = h.on(p)
	}
	return nil
}

func deleteID(ids []string, id string) []string {
	for i, x := range ids {
		if x == id {
			return append(ids[:i:i], ids[i+1:]...)
		}
	}
	return ids
}

// offerLocked queues cp, replacing a value of the same request not sent yet.
func (s *progressSub) offerLocked(cp CallProgress) {
	if _, ok := s.pending[cp.ID]; !ok {
		s.order = append(s.order, cp.ID)
	}
	s.pending[cp.ID] = cp
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// subscribe registers a stream, queueing the requests already in flight.
func (h *progressHub) subscribe() (*progressSub, bool) {
	s := &progressSub{wake: make(chan struct{}, 1), pending: make(map[string]CallProgress)}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, false
	}
	h.subs[s] = struct{}{}
	for _, id := range h.order {
		s.offerLocked(h.calls[id])
	}
	return s, true
}

// take removes and returns what s has pending; closed reports the hub's end.
func (h *progressHub) take(s *progressSub) (out []CallProgress, closed bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range s.order {
		out = append(out, s.pending[id])
	}
	clear(s.pending)
	s.order = s.order[:0]
	return out, s.closed
}

func (h *progressHub) unsubscribe(s *progressSub) {
	h.mu.Lock()
	delete(h.subs, s)
	h.mu.Unlock()
}

// close ends every stream (once it has sent what it had pending).
func (h *progressHub) close(context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.subs {
		s.closed = true
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
	return nil
}

// stream is mcpManager/progress: the requests in flight at once, then every change.
func (h *progressHub) stream(rcx context.Context, _ struct{}, send func(CallProgress) error) error {
	s, ok := h.subscribe()
	if !ok {
		return errClosed()
	}
	defer h.unsubscribe(s)
	for {
		select {
		case <-rcx.Done():
			return context.Cause(rcx)
		case <-s.wake:
		}
		vals, closed := h.take(s)
		for _, v := range vals {
			if err := send(v); err != nil {
				return err
			}
		}
		if closed {
			return errClosed()
		}
	}
}

// exposeProgress listens to the tree's progress events and exposes mcpManager/progress.
func exposeProgress(c *ctx.Context) error {
	h := &progressHub{calls: make(map[string]CallProgress), subs: make(map[*progressSub]struct{})}
	if _, err := c.Defer("mcpManager:progress", h.close); err != nil {
		return err
	}
	if _, err := mcpclient.ProgressEvent.On(c, h.on); err != nil {
		return err
	}
	if _, err := mcpclient.StatusEvent.On(c, h.onStatus); err != nil {
		return err
	}
	_, err := MethodProgress.Expose(c, h.stream)
	return err
}
