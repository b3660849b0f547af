package toolregistry

import (
	"encoding/json"
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

// history is a ring of the newest records.
type history struct {
	mu   sync.Mutex
	ring []*Record
	next int // index of the slot the next record goes into
	full bool
}

func (h *history) add(rec *Record) {
	h.mu.Lock()
	if len(h.ring) > 0 {
		h.ring[h.next] = rec
		h.next++
		if h.next == len(h.ring) {
			h.next, h.full = 0, true
		}
	}
	h.mu.Unlock()
}

// snapshotLocked returns the kept records, oldest first.
func (h *history) snapshotLocked() []*Record {
	if !h.full {
		return h.ring[:h.next:h.next]
	}
	out := make([]*Record, 0, len(h.ring))
	return append(append(out, h.ring[h.next:]...), h.ring[:h.next]...)
}

func (h *history) records() []Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	recs := h.snapshotLocked()
	out := make([]Record, len(recs))
	for i, r := range recs {
		out[i] = *r
	}
	return out
}

// resize changes the capacity, keeping the newest records.
func (h *history) resize(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n == len(h.ring) {
		return
	}
	recs := h.snapshotLocked()
	if len(recs) > n {
		recs = recs[len(recs)-n:]
	}
	ring := make([]*Record, n)
	copy(ring, recs)
	h.ring, h.next, h.full = ring, len(recs), len(recs) == n
	if h.full {
		h.next = 0
	}
}

// History returns the recorded executions, oldest first (at most historySize of them, the
// newest kept).
func (r *Registry) History() []Record { return r.hist.records() }
