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

// historyMaxBytes bounds the bytes the history retains (arguments and results), whatever
// its record count: a run of huge results must not pin gigabytes. The oldest records go
// first; the newest is always kept.
const historyMaxBytes = 32 << 20

// history keeps the newest records by value: a record retains only its own fields (the
// arguments, the final result, the error and the caller's scope), not the per-execution
// state it was built in. It is bounded by count (size) and by retained bytes.
type history struct {
	mu    sync.Mutex
	size  int      // capacity in records
	recs  []Record // recs[start:] are kept, oldest first
	start int
	bytes int // retained bytes of recs[start:]
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
	h.recs = append(h.recs, *rec)
	h.bytes += recordBytes(rec)
	for kept := len(h.recs) - h.start; kept > 1 && (kept > h.size || h.bytes > historyMaxBytes); kept-- {
		h.bytes -= recordBytes(&h.recs[h.start])
		h.recs[h.start] = Record{}
		h.start++
	}
	if h.start > len(h.recs)/2 && h.start > 16 {
		h.recs = append(h.recs[:0], h.recs[h.start:]...)
		clear(h.recs[len(h.recs):cap(h.recs)])
		h.start = 0
	}
}

func (h *history) records() []Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.recs[h.start:])
}

// resize changes the capacity, keeping the newest records.
func (h *history) resize(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.size = n
	kept := h.recs[h.start:]
	if len(kept) > n {
		kept = kept[len(kept)-n:]
	}
	h.recs = slices.Clone(kept)
	h.start = 0
	h.bytes = 0
	for i := range h.recs {
		h.bytes += recordBytes(&h.recs[i])
	}
}

// History returns the recorded executions, oldest first (at most historySize of them, the
// newest kept).
func (r *Registry) History() []Record { return r.hist.records() }
