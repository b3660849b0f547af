package ptc

import (
	"runtime"
	"testing"
	"testing/synctest"
	"time"
)

// A budget asked while a collection the run forced is still running (the watcher's, on its
// own goroutine, started less than gcSpacing ago) waits for its end before it measures the
// heap, rather than counting the garbage being collected.
func TestBudgetWaitsForTheCollectionUnderWay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x := &run{}
		running := make(chan struct{}) // the watcher's collection, under way
		x.lastGC, x.gcDone = time.Now(), running
		result := make(chan bool, 1)
		go func() { result <- x.collectedNow() }()
		synctest.Wait()
		select {
		case got := <-result:
			t.Fatalf("collectedNow returned %v while the collection was under way", got)
		default:
		}
		close(running)
		if !<-result {
			t.Fatal("collectedNow: false after waiting for the collection under way, want true")
		}
		// One that ended before the budget was asked did not collect its garbage.
		if x.collectedNow() {
			t.Error("collectedNow: true for a collection that had ended already")
		}
	})
}

// A run's timer holds nothing of the run once it has ended: the CPU limit's timer and a
// sleep's can stay in the runtime's timer heap after Stop until their time comes (half a
// minute and more), and a run is its interpreter and every value of the program, which the
// next run would count in the live heap it measures its growth from, then see freed under
// it as room it never had (TestMemoryProbes' typed array copies passed its guard that way).
func TestEndedRunIsNotHeldByItsTimers(t *testing.T) {
	x := &run{ref: &runRef{}}
	x.ref.p.Store(x)
	fired := make(chan *run, 1)
	timer := x.afterFunc(time.Hour, func(x *run) { fired <- x })
	timer.Stop()
	x.ref.p.Store(nil) // the run ends
	collected := make(chan struct{})
	runtime.AddCleanup(x, func(struct{}) { close(collected) }, struct{}{})
	x = nil
	deadline := time.After(10 * time.Second)
	for {
		runtime.GC()
		select {
		case <-collected:
			runtime.KeepAlive(timer)
			return
		case <-deadline:
			t.Fatal("the ended run is still reachable through its stopped timer")
		case <-time.After(10 * time.Millisecond):
		}
	}
}
