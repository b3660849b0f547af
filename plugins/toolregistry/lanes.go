package toolregistry

import (
	"runtime"
	"slices"
	"strconv"
	"strings"
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
	ids    string          // the block's call IDs, one after the other; guarded by idMu
	idEnds [idBlock]uint16 // where each ID of the block ends in ids; guarded by idMu
	next   int             // the block's next ID; guarded by idMu
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
// lane (so, one goroutine's calls in a row usually count 1, 2, 3), not across lanes. A lane
// writes a block's IDs into one string and hands out substrings of it: one allocation per
// block, not one per call.
func (ls *lanes) callID(l *lane) string {
	l.idMu.Lock()
	defer l.idMu.Unlock()
	if l.ids == "" || l.next == idBlock {
		end := ls.seq.Add(idBlock)
		var sb strings.Builder
		sb.Grow(idBlock * len("call_4294967296"))
		var num [20]byte
		for i := range uint64(idBlock) {
			sb.WriteString("call_")
			sb.Write(strconv.AppendUint(num[:0], end-idBlock+i+1, 10))
			l.idEnds[i] = uint16(sb.Len()) // at most idBlock*len("call_18446744073709551615")
		}
		l.ids, l.next = sb.String(), 0
	}
	start := 0
	if l.next > 0 {
		start = int(l.idEnds[l.next-1])
	}
	id := l.ids[start:l.idEnds[l.next]]
	l.next++
	return id
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
