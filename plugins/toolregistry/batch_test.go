package toolregistry_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cordisgo/harness/plugins/toolregistry"
)

func TestSchedulerRule(t *testing.T) {
	s := toolregistry.NewScheduler(2)
	first, second := s.Start(true), s.Start(true)
	if !first || !second {
		t.Fatal("two safe calls should overlap")
	}
	if s.Start(true) {
		t.Fatal("a third safe call should wait for a slot")
	}
	if s.Start(false) {
		t.Fatal("an exclusive call should wait for the running ones")
	}
	s.Finish(true)
	s.Finish(true)
	if !s.Start(false) {
		t.Fatal("an exclusive call should start once nothing runs")
	}
	if s.Start(true) || s.Start(false) {
		t.Fatal("nothing starts beside an exclusive call")
	}
	s.Finish(false)
	if !s.Start(true) || s.Running() != 1 {
		t.Fatalf("a safe call should start after the exclusive one; running %d", s.Running())
	}
}

// trace runs a batch whose call i sleeps d[i] and records starts, ends and Done's order.
type trace struct {
	mu     sync.Mutex
	events []string
	active int
	peak   int
}

func (tr *trace) add(s string) {
	tr.mu.Lock()
	tr.events = append(tr.events, s)
	tr.mu.Unlock()
}

func runTrace(cx context.Context, safe []bool, d []time.Duration, limit int) *trace {
	tr := &trace{}
	toolregistry.RunBatch(cx, toolregistry.Batch{
		N: len(safe), Max: limit,
		Safe:  func(i int) bool { return safe[i] },
		Start: func(i int) { tr.add(fmt.Sprintf("start %d", i)) },
		Run: func(cx context.Context, i int) {
			tr.mu.Lock()
			tr.active++
			tr.peak = max(tr.peak, tr.active)
			if !safe[i] && tr.active != 1 {
				tr.events = append(tr.events, fmt.Sprintf("BUG: %d ran beside others", i))
			}
			tr.mu.Unlock()
			select {
			case <-time.After(d[i]):
			case <-cx.Done():
			}
			tr.mu.Lock()
			tr.active--
			tr.mu.Unlock()
		},
		Abort: func(i int) { tr.add(fmt.Sprintf("abort %d", i)) },
		Done:  func(i int) { tr.add(fmt.Sprintf("done %d", i)) },
	})
	return tr
}

func doneOrder(events []string) []string {
	var out []string
	for _, e := range events {
		if e[0] == 'd' || e[0] == 'a' || e[0] == 'B' {
			out = append(out, e)
		}
	}
	return out
}

func TestRunBatchOverlapsSafeCallsAndKeepsOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		safe := []bool{true, true, true, false, true, true}
		d := []time.Duration{30 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond, 1 * time.Millisecond}
		start := time.Now()
		tr := runTrace(t.Context(), safe, d, 2)
		want := []string{"done 0", "done 1", "done 2", "done 3", "done 4", "done 5"}
		if got := doneOrder(tr.events); !slices.Equal(got, want) {
			t.Fatalf("results %v, want %v (events %v)", got, want, tr.events)
		}
		if tr.peak != 2 {
			t.Fatalf("at most 2 calls should overlap, and 2 did; peak %d", tr.peak)
		}
		// 0 and 1 overlap; 2 takes 1's slot at 10 ms and ends at 30 ms with 0; 3 runs alone
		// (30–35 ms); 4 and 5 overlap (35–45 ms).
		if el := time.Since(start); el != 45*time.Millisecond {
			t.Fatalf("the batch took %v, want 45ms", el)
		}
	})
}

func TestRunBatchCancelAbortsCallsNotStarted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cx, cancel := context.WithCancel(t.Context())
		safe := []bool{true, false, true}
		d := []time.Duration{time.Hour, time.Millisecond, time.Millisecond}
		time.AfterFunc(10*time.Millisecond, cancel)
		tr := runTrace(cx, safe, d, 4)
		want := []string{"done 0", "abort 1", "abort 2", "done 1", "done 2"}
		if got := doneOrder(tr.events); !slices.Equal(got, want) {
			t.Fatalf("events %v, want %v", got, want)
		}
	})
}
