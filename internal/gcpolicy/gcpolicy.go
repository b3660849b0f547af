// Package gcpolicy sets the garbage collector policy of the harness binary: a heap goal of
// at least MinHeap while the live heap is small, and Go's default (GOGC=100, a goal of
// twice the live heap) once it is large.
//
// Why: an MCP host keeps little live data (a few hundred kilobytes) but allocates a lot of
// short-lived garbage — the go-sdk allocates about 130 KB per tool call, mostly 32 KiB JSON
// decoder buffers. With Go's defaults the collector then runs at its 4 MiB minimum goal,
// every 20 to 30 calls, and costs a third of the client's CPU. A 32 MiB floor cuts that
// by about eight, for resident memory that stays under 30 MiB while the host is idle and
// about 45 MiB while it makes thousands of calls a second (docs/performance.md has the
// numbers; the floor was 16 MiB until measurements showed the second halving worth it).
// GOGC=800 would give the same floor, but also let a large live heap (big results,
// attachments) grow to nine times its size; the policy returns to GOGC=100 instead.
//
// The policy is the binary's, not the library's: packages never change a process's GC
// settings, and an explicit GOGC in the environment always wins.
package gcpolicy

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// MinHeap is the heap goal the policy keeps while the live heap is small.
const MinHeap = 32 << 20

// maxPercent is the GOGC value that makes Go's own minimum goal (4 MiB × GOGC/100) MinHeap.
const maxPercent = 100 * MinHeap / (4 << 20)

// Percent returns the GOGC value that makes the heap goal about max(MinHeap, 2 × live).
func Percent(live uint64) int {
	if live == 0 || live*uint64(1+maxPercent/100) <= MinHeap {
		return maxPercent
	}
	p := int(100*MinHeap/live) - 100
	return max(100, min(maxPercent, p))
}

// Policy adjusts the GC percent after every collection. Its methods are safe for
// concurrent use.
type Policy struct {
	mu      sync.Mutex
	stopped bool
	percent int
	sample  []metrics.Sample
}

// Start applies the policy unless the GOGC environment variable is set (then it returns
// nil and changes nothing). Stop ends it and restores GOGC=100.
func Start() *Policy {
	if _, set := os.LookupEnv("GOGC"); set {
		return nil
	}
	p := &Policy{percent: maxPercent, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	debug.SetGCPercent(maxPercent)
	p.arm()
	return p
}

// arm registers a cleanup that runs after the next collection.
func (p *Policy) arm() {
	sentinel := new([2]int64) // 16 bytes: not tiny-allocated, so freed by the next GC
	runtime.AddCleanup(sentinel, func(p *Policy) { p.afterGC() }, p)
}

func (p *Policy) afterGC() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	metrics.Read(p.sample)
	var live uint64
	if p.sample[0].Value.Kind() == metrics.KindUint64 {
		live = p.sample[0].Value.Uint64()
	}
	// Change it only when it moves by a tenth, to keep SetGCPercent off the common path.
	if want := Percent(live); want*10 < p.percent*9 || want*10 > p.percent*11 {
		p.percent = want
		debug.SetGCPercent(want)
	}
	p.arm()
}

// Current returns the GC percent the policy last set; 0 for a nil Policy.
func (p *Policy) Current() int {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.percent
}

// Stop ends the policy and restores Go's default. A nil Policy is a no-op.
func (p *Policy) Stop() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.stopped {
		p.stopped = true
		debug.SetGCPercent(100)
	}
}
