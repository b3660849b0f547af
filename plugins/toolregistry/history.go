package toolregistry

import (
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/cordisgo/harness/ctx"
)

// Record is one execution, as recorded in the history and carried by [Executed] and
// [PostExecute].
//
// A Record is immutable once recorded; PostExecute listeners receive it before Result and
// Duration are final and must not modify it.
type Record struct {
	// CallID identifies the execution (see [Call.ID]).
	CallID string `json:"callId"`
	// Tool is the name called.
	Tool string `json:"tool"`
	// Scope is the caller's scope, and ScopeName its name.
	Scope     *ctx.Scope `json:"-"`
	ScopeName string     `json:"scope"`
	// Args are the arguments as passed (nil when none were).
	Args json.RawMessage `json:"args,omitempty"`
	// Outcome is [CodeOK] or the code of Err.
	Outcome Code `json:"outcome"`
	// Err is the error of a failed execution, nil on success.
	Err *ToolError `json:"error,omitempty"`
	// Started is when the execution began, and Duration how long the whole pipeline took.
	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"durationNs"`
	// Result is the final result: what Execute returned to its caller.
	Result *Result `json:"result,omitempty"`
}

// history is a ring of the newest records, kept by value: a record retains only its own
// fields (the arguments, the final result, the error and the caller's scope), not the
// per-execution state it was built in. The ring grows with use up to its size.
type history struct {
	mu   sync.Mutex
	size int      // capacity
	ring []Record // len(ring) <= size; once len(ring) == size, next is the oldest
	next int      // index of the slot the next record overwrites once the ring is full
}

func (h *history) add(rec *Record) {
	h.mu.Lock()
	switch {
	case h.size == 0:
	case len(h.ring) < h.size:
		if len(h.ring) == cap(h.ring) {
			h.ring = slices.Grow(h.ring, min(max(2*len(h.ring), 16), h.size)-len(h.ring))
		}
		h.ring = append(h.ring, *rec)
	default:
		h.ring[h.next] = *rec
		if h.next++; h.next == h.size {
			h.next = 0
		}
	}
	h.mu.Unlock()
}

// appendLocked appends the kept records to dst, oldest first.
func (h *history) appendLocked(dst []Record) []Record {
	return append(append(dst, h.ring[h.next:]...), h.ring[:h.next]...)
}

func (h *history) records() []Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.appendLocked(make([]Record, 0, len(h.ring)))
}

// resize changes the capacity, keeping the newest records.
func (h *history) resize(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n == h.size {
		return
	}
	recs := h.appendLocked(nil)
	if len(recs) > n {
		recs = recs[len(recs)-n:]
	}
	h.ring = slices.Clip(slices.Clone(recs))
	h.size, h.next = n, 0
}

// History returns the recorded executions, oldest first (at most historySize of them, the
// newest kept).
func (r *Registry) History() []Record { return r.hist.records() }
