package toolregistry

import (
	"context"
)

// Scheduler is the one rule for running the tool calls of a batch (the calls of one model
// answer, or of one PTC program): calls start in the order they were made; a safe call
// (one that may run alongside others, such as a read-only tool's) overlaps other safe calls,
// up to Max at once; any other call runs alone — it starts once every call before it has
// finished, and the calls after it wait for it. Callers record the results in the order of
// the calls, not of their completion, so what the model reads does not depend on timing.
//
// A Scheduler only counts; its owner starts the calls. It is not safe for concurrent use:
// the owner serializes Start and Finish (PTC's event loop; [RunBatch]'s dispatcher).
type Scheduler struct {
	max       int
	running   int
	exclusive bool
}

// NewScheduler returns a scheduler that lets up to max safe calls overlap (max < 1: 1).
func NewScheduler(n int) *Scheduler { return &Scheduler{max: max(n, 1)} }

// Start reports whether the next call in order (safe or not) may start now, and counts it
// as running when it may. A call that may not start holds back every call after it.
func (s *Scheduler) Start(safe bool) bool {
	if safe && (s.exclusive || s.running >= s.max) || !safe && s.running > 0 {
		return false
	}
	s.running++
	s.exclusive = !safe
	return true
}

// Finish records that a started call ended.
func (s *Scheduler) Finish(safe bool) {
	s.running--
	if !safe {
		s.exclusive = false
	}
}

// Running returns how many started calls have not finished.
func (s *Scheduler) Running() int { return s.running }

// Batch describes calls 0..N-1 for [RunBatch]. Its functions are called as documented on
// each; none is called concurrently with itself except Run.
type Batch struct {
	// N is the number of calls.
	N int
	// Max bounds the safe calls running at once (< 1: 1).
	Max int
	// Safe reports whether call i may run alongside other calls.
	Safe func(i int) bool
	// Start is called on RunBatch's goroutine, in the calls' order, right before call i
	// runs (nil: nothing).
	Start func(i int)
	// Run runs call i: on a goroutine of its own when it may overlap other calls, on
	// RunBatch's goroutine when it runs alone. cx is RunBatch's.
	Run func(cx context.Context, i int)
	// Abort is called, in order, for each call that never started because cx ended first,
	// instead of Start and Run.
	Abort func(i int)
	// Done is called on RunBatch's goroutine for each call, in index order, once it and
	// every call before it have finished or been aborted: the results in the model's order.
	Done func(i int)
}

// RunBatch runs the calls of b under the [Scheduler]'s rule and returns once each has
// finished (or been aborted) and been handed to b.Done. When cx ends, calls already running
// finish with their own outcome (they see cx), and calls not started are aborted.
func RunBatch(cx context.Context, b Batch) {
	s := NewScheduler(b.Max)
	finished := make(chan int, b.N)
	done := make([]bool, b.N)
	committed := 0
	commit := func() { // hand the finished prefix to Done
		for committed < b.N && done[committed] {
			b.Done(committed)
			committed++
		}
	}
	settle := func(i int) {
		s.Finish(b.Safe(i))
		done[i] = true
		commit()
	}
	// admit waits until the next call may start; false when cx ended first.
	admit := func(safe bool) bool {
		for cx.Err() == nil {
			if s.Start(safe) {
				return true
			}
			if !safe { // it runs alone: wait for the running calls, which end cancelled or not
				settle(<-finished)
				continue
			}
			select { // every slot is taken
			case i := <-finished:
				settle(i)
			case <-cx.Done():
			}
		}
		return false
	}
	next := 0
	for ; next < b.N; next++ {
		i, safe := next, b.Safe(next)
		if !admit(safe) {
			break
		}
		if b.Start != nil {
			b.Start(i)
		}
		if !safe {
			b.Run(cx, i)
			settle(i)
			continue
		}
		go func() {
			b.Run(cx, i)
			finished <- i
		}()
	}
	for s.Running() > 0 {
		settle(<-finished)
	}
	for i := next; i < b.N; i++ {
		b.Abort(i)
		done[i] = true
	}
	commit()
}
