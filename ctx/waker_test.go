package ctx_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
)

// marked reports whether the waker holds a mark, consuming it.
func marked(w *ctx.Waker) bool {
	select {
	case <-w.C():
		return true
	default:
		return false
	}
}

func TestWakerCoalescesAndFilters(t *testing.T) {
	root := ctxtest.New(t)
	var mu sync.Mutex
	var seen []string
	w, err := ping.Wake(root, func(s string) bool {
		if s == "other" {
			return false
		}
		mu.Lock()
		seen = append(seen, s)
		mu.Unlock()
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if marked(w) {
		t.Fatal("marked before any event")
	}
	for _, s := range []string{"a", "other", "b", "c"} {
		_ = ping.Emit(root, s)
	}
	if err := w.Wait(ctxtest.Wait(t), nil, nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := append([]string(nil), seen...)
	mu.Unlock()
	if len(got) != 3 || got[0] != "a" || got[2] != "c" {
		t.Fatalf("noted %v; want a b c (other filtered out)", got)
	}
	if marked(w) {
		t.Fatal("three events woke the loop more than once")
	}
	_ = ping.Emit(root, "other")
	if marked(w) {
		t.Fatal("an event the note refused woke the loop")
	}
}

func TestWakerWaitEnds(t *testing.T) {
	root := ctxtest.New(t)
	w, err := ping.Wake(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	cause := errors.New("client went away")
	rcx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	if err := w.Wait(rcx, nil, nil); !errors.Is(err, cause) {
		t.Fatalf("Wait on an ended request = %v; want its cause", err)
	}
	done := make(chan struct{})
	close(done)
	closed := errors.New("service closed")
	if err := w.Wait(context.Background(), done, closed); !errors.Is(err, closed) {
		t.Fatalf("Wait after done = %v; want doneErr", err)
	}
	_ = ping.Emit(root, "x")
	if err := w.Wait(context.Background(), nil, nil); err != nil {
		t.Fatalf("Wait with a mark = %v", err)
	}
}

func TestWakerStopAndScopeEnd(t *testing.T) {
	root := ctxtest.New(t)
	w, err := ping.Wake(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Stop()
	w.Stop()
	_ = ping.Emit(root, "x")
	if marked(w) {
		t.Fatal("woken after Stop")
	}

	var inner *ctx.Waker
	s := ctxtest.MountActive(t, root, ctx.Define(ctx.Meta{Name: "follower"}, func(c *ctx.Context, _ struct{}) error {
		var err error
		inner, err = ping.Wake(c, nil)
		return err
	}), nil)
	_ = ping.Emit(root, "y")
	if !marked(inner) {
		t.Fatal("not woken while its scope is active")
	}
	if err := s.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	_ = ping.Emit(root, "z")
	if marked(inner) {
		t.Fatal("woken after its scope was disposed")
	}
	inner.Stop() // after the scope ended: nothing to do
}

// No wake-up is lost: a loop that reads shared state after each Wait sees every event of
// two concurrent emitters (the test ends only if it does).
func TestWakerLosesNoWakeUp(t *testing.T) {
	root := ctxtest.New(t)
	const n = 2000
	var mu sync.Mutex
	noted := 0
	count := ctx.NewEvent[int]("test/count")
	w, err := count.Wake(root, func(int) bool {
		mu.Lock()
		noted++
		mu.Unlock()
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var wg sync.WaitGroup
	wg.Add(2)
	for g := range 2 {
		go func() {
			defer wg.Done()
			for i := 1; i <= n; i++ {
				if i%2 == g {
					_ = count.Emit(root, i)
				}
			}
		}()
	}
	rcx := ctxtest.Wait(t)
	for {
		if err := w.Wait(rcx, nil, nil); err != nil {
			t.Fatalf("the last events never woke the loop: %v", err)
		}
		mu.Lock()
		all := noted == n
		mu.Unlock()
		if all {
			break
		}
	}
	wg.Wait()
}
