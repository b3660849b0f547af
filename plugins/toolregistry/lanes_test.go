package toolregistry

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Call IDs are unique across lanes and goroutines, and count up within a lane.
func TestLaneCallIDs(t *testing.T) {
	ls := newLanes(4, 10)
	const goroutines, each = 8, 1000
	ids := make(chan string, goroutines*each)
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range each {
				ids <- ls.callID(ls.pick())
			}
		})
	}
	wg.Wait()
	close(ids)
	seen := map[string]bool{}
	for id := range ids {
		n, err := strconv.ParseUint(strings.TrimPrefix(id, "call_"), 10, 64)
		if seen[id] || !strings.HasPrefix(id, "call_") || err != nil || n == 0 {
			t.Fatalf("call ID %q repeated or malformed", id)
		}
		seen[id] = true
	}
	// Within a lane the IDs count up by one, and go on increasing past a block's end.
	l := ls.all[0]
	prev, _ := strconv.Atoi(strings.TrimPrefix(ls.callID(l), "call_"))
	for range 2 * idBlock {
		n, _ := strconv.Atoi(strings.TrimPrefix(ls.callID(l), "call_"))
		if n <= prev || n != prev+1 && n%idBlock != 1 {
			t.Fatalf("IDs of one lane do not count up: %d then %d", prev, n)
		}
		prev = n
	}
}

// The history of all lanes reads as one: the newest size records, oldest first, however the
// calls spread over the lanes.
func TestLaneHistory(t *testing.T) {
	ls := newLanes(3, 5)
	start := time.Now()
	for i := range 12 {
		ls.all[i%len(ls.all)].hist.add(&Record{CallID: string(rune('a' + i)), Started: start.Add(time.Duration(i))})
	}
	got := ""
	for _, r := range ls.records(5) {
		got += r.CallID
	}
	if got != "hijkl" {
		t.Fatalf("history %q, want the newest five in order", got)
	}
	ls.resize(2)
	got = ""
	for _, r := range ls.records(2) {
		got += r.CallID
	}
	if got != "kl" {
		t.Fatalf("after resize: %q", got)
	}
}
