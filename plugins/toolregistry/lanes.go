package toolregistry

import (
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
)

// maxLanes bounds the number of lanes, whatever GOMAXPROCS says.
const maxLanes = 64

// idBlock is how many call IDs a lane takes from the registry's counter at once.
const idBlock = 256

// lane is one processor's share of the bookkeeping every call does: its call ID, its
// deadline and its history record. A registry has one lane per processor (GOMAXPROCS when it
// was made), and a call takes the lane of the processor it runs on, so that calls on
// different cores write to different memory. With one shared history, one shared deadline
// heap and one shared counter, each call wrote to memory that every core shares (a lock is
// such a write, even uncontended), and two cores ran BenchmarkExecuteNoopParallel no faster
// than one (issue 39, docs/performance.md).
//
// A lane is safe for concurrent use: a goroutine moved to another processor keeps using the
// lane it took, under the lane's locks.
type lane struct {
	idMu   sync.Mutex
	next   uint64 // the next call ID of the block; guarded by idMu
	end    uint64 // the end of the block; guarded by idMu
	hist   history
	timers deadlines
	_      [64]byte // keeps the next lane's locks off this lane's cache line
}

// lanes is a registry's set of lanes. Its zero value is not ready: use newLanes.
type lanes struct {
	all []*lane
	// local holds, per processor, the lane that processor's calls use (sync.Pool keeps a
	// private item per processor). The garbage collector empties it now and then; a
	// processor whose lane is gone takes the next one in turn.
	local sync.Pool
	turn  atomic.Uint32
	seq   atomic.Uint64 // hands out blocks of call IDs
}

// newLanes returns n lanes (0: one per processor, at most maxLanes) whose histories keep
// historySize records.
func newLanes(n, historySize int) *lanes {
	if n == 0 {
		n = min(max(runtime.GOMAXPROCS(0), 1), maxLanes)
	}
	ls := &lanes{all: make([]*lane, n)}
	for i := range ls.all {
		l := &lane{}
		l.hist.maxBytes = historyMaxBytes / n
		l.hist.resize(historySize)
		ls.all[i] = l
	}
	return ls
}

// pick returns the lane of the calling goroutine's processor.
func (ls *lanes) pick() *lane {
	var l *lane
	if v := ls.local.Get(); v != nil {
		l = v.(*lane)
	} else {
		l = ls.all[int(ls.turn.Add(1))%len(ls.all)]
	}
	ls.local.Put(l)
	return l
}

// callID returns a new call ID, "call_<n>": unique in the registry, increasing within a
// lane (so, one goroutine's calls in a row usually count 1, 2, 3), not across lanes.
func (ls *lanes) callID(l *lane) string {
	l.idMu.Lock()
	if l.next == l.end {
		l.end = ls.seq.Add(idBlock)
		l.next = l.end - idBlock
	}
	l.next++
	n := l.next
	l.idMu.Unlock()
	var b [24]byte
	return string(strconv.AppendUint(append(b[:0], "call_"...), n, 10))
}

// records returns the newest size records of all lanes, oldest first (by start time; the
// calls of one lane keep their order).
func (ls *lanes) records(size int) []Record {
	var out []Record
	for _, l := range ls.all {
		out = append(out, l.hist.records()...)
	}
	slices.SortStableFunc(out, func(a, b Record) int { return a.Started.Compare(b.Started) })
	if len(out) > size {
		out = slices.Delete(out, 0, len(out)-size)
	}
	return out
}

// resize changes every lane's history capacity: each keeps up to n records, so the lanes
// together always hold the newest n.
func (ls *lanes) resize(n int) {
	for _, l := range ls.all {
		l.hist.resize(n)
	}
}
