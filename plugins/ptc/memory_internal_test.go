package ptc

import (
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
