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

// historyMaxBytes bounds the bytes the history retains (arguments and results), whatever
// its record count: a run of huge results must not pin gigabytes. The oldest records go
// first; the newest is always kept.
const historyMaxBytes = 32 << 20

// history keeps the newest records by value: a record retains only its own fields (the
// arguments, the final result, the error and the caller's scope), not the per-execution
// state it was built in. It is bounded by count (size) and by retained bytes. The records
// live in a ring that grows up to size and is then reused, so the history holds no slack
// for the garbage collector to mark.
type history struct {
	mu       sync.Mutex
	maxBytes int      // the bound on retained bytes; 0 means historyMaxBytes
	size     int      // capacity in records
	ring     []Record // len(ring) <= size
	head     int      // index of the oldest kept record in ring
	n        int      // records kept
	bytes    int      // retained bytes of the kept records
}

// recordBytes estimates what a record retains beyond its fixed fields.
func recordBytes(rec *Record) int {
	n := len(rec.Args)
	if res := rec.Result; res != nil {
		n += len(res.Raw) + len(res.Structured)
		for _, c := range res.Content {
			n += len(c.Text) + len(c.JSON)
		}
	}
	return n
}

func (h *history) add(rec *Record) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.size == 0 {
		return
	}
	if h.n == h.size {
		h.dropOldest()
	}
	if i := (h.head + h.n) % h.size; i < len(h.ring) {
		h.ring[i] = *rec
	} else {
		h.ring = append(h.ring, *rec) // still growing: head is 0, i == len(ring)
	}
	h.n++
	h.bytes += recordBytes(rec)
	limit := h.maxBytes
	if limit == 0 {
		limit = historyMaxBytes
	}
	for h.n > 1 && h.bytes > limit {
		h.dropOldest()
	}
}

// dropOldest forgets the oldest kept record; h.n > 0.
func (h *history) dropOldest() {
	old := &h.ring[h.head]
	h.bytes -= recordBytes(old)
	*old = Record{}
	h.head = (h.head + 1) % h.size
	h.n--
}

// records returns copies of the kept records, oldest first.
func (h *history) records() []Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.kept()
}

// kept is records with h.mu held.
func (h *history) kept() []Record {
	out := make([]Record, h.n)
	for i := range out {
		out[i] = h.ring[(h.head+i)%h.size]
	}
	return out
}

// resize changes the capacity, keeping the newest records.
func (h *history) resize(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	kept := h.kept()
	if len(kept) > n {
		kept = kept[len(kept)-n:]
	}
	h.size, h.ring, h.head, h.n, h.bytes = n, kept, 0, len(kept), 0
	for i := range kept {
		h.bytes += recordBytes(&kept[i])
	}
}

// History returns the recorded executions, oldest first (at most historySize of them, the
// newest kept).
func (r *Registry) History() []Record { return r.lanes.records(r.options().HistorySize) }
