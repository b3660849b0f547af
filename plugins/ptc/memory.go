package ptc

import (
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"time"
)

// The interpreter has no heap cap: its values live on the process's Go heap, and its
// built-in functions are Go loops that the interrupt (checked between the program's
// instructions) does not stop. A run bounds its memory three ways (docs/ptc.md, "Memory",
// has the design and its measured limits):
//
//   - a budget: every built-in call whose allocation the program sizes, and every
//     concatenation, is refused before it allocates when it needs more than the run has left
//     (allow; the guards are in guard*.go, the concatenation helpers in concat.go);
//   - checkpoints: the Go loops that call back into something the run controls (iterators'
//     next, replacer functions) stop there once the run is stopped (checkpoint);
//   - a watcher: the process heap is sampled every memoryTick while the run lasts, and the
//     run stops once it has grown by more than MaxMemoryBytes since the run began (after one
//     forced collection, so garbage does not count), or by more than twice that at once.

// memoryTick is how often the watcher samples the heap.
const memoryTick = 2 * time.Millisecond

// smallAlloc is the size below which allow does not read the heap: the watcher bounds the
// sum of small allocations.
const smallAlloc = 64 << 10

// gcSpacing is the least time between two collections forced by one run.
const gcSpacing = 20 * time.Millisecond

// readMetric reads one of the runtime's uint64 metrics.
func readMetric(name string) int64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// heapBytes reads the bytes of live and not yet collected heap objects.
func heapBytes() int64 { return readMetric("/memory/classes/heap/objects:bytes") }

// growth is how much the heap has grown since the run began: the heap objects now against
// the live heap when it began. Garbage left by others counts until it is collected (the
// budget and the watcher collect before they refuse), so a run never inherits a budget
// that garbage of the past inflated.
func (x *run) growth() int64 {
	g := heapBytes() - x.heapBase
	if g > x.heapGrowth.Load() {
		x.heapGrowth.Store(g)
	}
	return g
}

// collect forces a collection unless one was started less than gcSpacing ago; it reports
// whether it did. Safe from any goroutine.
func (x *run) collect() bool {
	x.gcMu.Lock()
	now := time.Now()
	if now.Sub(x.lastGC) < gcSpacing {
		x.gcMu.Unlock()
		return false
	}
	done := make(chan struct{})
	x.lastGC, x.gcDone = now, done
	x.gcMu.Unlock()
	runtime.GC()
	x.collected.Store(time.Now().UnixNano())
	close(done)
	return true
}

// collectedNow reports whether the heap has just been collected: collect forced a
// collection, or one the run forced lately (the watcher's, on its own goroutine) was still
// running, and has now ended. Without the wait, a budget asked while the watcher collects
// would count the garbage being collected against the run.
func (x *run) collectedNow() bool {
	if x.collect() {
		return true
	}
	x.gcMu.Lock()
	done := x.gcDone
	x.gcMu.Unlock()
	if done == nil {
		return false
	}
	select {
	case <-done:
		return false // ended before: it did not help
	default:
	}
	<-done
	return true
}

// baseline is the heap the run's growth is measured from: the live heap when it begins,
// as the runtime knows it from its last collection. Objects that died since would be
// counted as the run's own budget once collected: a run that grew the heap by more than a
// quarter of its limit collects when it ends (Run), and when the heap holds more than a
// quarter of the limit beyond the live heap, a collection settles it first.
func (x *run) baseline() int64 {
	objects, live := heapBytes(), readMetric("/gc/heap/live:bytes")
	if objects-live <= x.l.MaxMemoryBytes/4 {
		return min(objects, live)
	}
	runtime.GC()
	return heapBytes()
}

// watchMemory starts the heap watcher; the returned function stops it and waits for it
// (and for a collection it started).
func (x *run) watchMemory() (stop func()) {
	x.heapBase = x.baseline()
	start := heapBytes()
	quit, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		var collecting sync.WaitGroup
		defer collecting.Wait()
		t := time.NewTicker(memoryTick)
		defer t.Stop()
		limit := x.l.MaxMemoryBytes
		var over int64 // when the growth went over the limit (unix ns), 0 while under it
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			grown, added := x.growth(), heapBytes()-start
			switch {
			case grown <= limit:
				over = 0
				continue
			case over == 0:
				over = time.Now().UnixNano()
			}
			// Garbage does not count: the run stops once a collection that ended after the
			// growth went over the limit left it over. The collection runs on its own
			// goroutine, so the watcher goes on sampling meanwhile; heap objects added
			// since the run began past one and a half times the limit stop the run without
			// waiting for it.
			if added <= limit+limit/2 && x.collected.Load() < over {
				collecting.Go(func() { x.collect() })
				continue
			}
			x.fail(x.memoryError("the program's memory grew by more than " + size(limit)))
		}
	}()
	return func() {
		close(quit)
		<-finished
	}
}

func (x *run) memoryError(what string) *Error {
	return &Error{Kind: KindMemory, Msg: what + " (memory limit " + size(x.l.MaxMemoryBytes) + "); work on smaller pieces"}
}

// allow refuses, before it allocates, a built-in call (what) that needs about bytes more
// than the run has left of its memory limit: it stops the run and throws. Only from a
// function the program calls (a guard); elsewhere use exceeds.
func (x *run) allow(what string, bytes int64) {
	if e := x.exceeds(what, bytes); e != nil {
		x.fail(e)
		panic(x.vm.NewGoError(x.reason.Load())) // the program may catch it; the interrupt fail raised stops it next
	}
}

// exceeds is the memory error for what when it needs about bytes more than the run has
// left (after a collection, if one may help), and nil when they fit.
func (x *run) exceeds(what string, bytes int64) *Error {
	if bytes <= smallAlloc {
		return nil
	}
	limit := x.l.MaxMemoryBytes
	if bytes > limit {
		return x.memoryError(what + " needs about " + size(bytes) + ", more than the whole limit")
	}
	if x.growth()+bytes <= limit || x.collectedNow() && x.growth()+bytes <= limit {
		return nil
	}
	return x.memoryError(what + " needs about " + size(bytes) + ", more than the run has left (" + size(max(limit-x.growth(), 0)) + ")")
}

// checkpoint stops a Go loop of the interpreter that calls back into the run (an iterator's
// next, a replacer) once the run has been stopped: the interrupt alone would wait for the
// loop to end. Loop goroutine only.
func (x *run) checkpoint() {
	if e := x.reason.Load(); e != nil {
		panic(x.vm.NewGoError(e))
	}
}

// size renders a byte count for people: bytes, KiB or MiB.
func size(n int64) string {
	switch {
	case n < 10<<10:
		return strconv.FormatInt(n, 10) + " bytes"
	case n < 10<<20:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n>>20, 10) + " MiB"
}
