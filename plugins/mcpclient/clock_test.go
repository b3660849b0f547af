package mcpclient

import (
	"sync"
	"testing"
	"time"

	"github.com/cordisgo/harness/ctx/ctxtest"
)

// fakeClock is a clock whose timers fire only when the test says so.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	armed  chan struct{}
}

type fakeTimer struct {
	d       time.Duration
	c       chan time.Time
	stopped bool
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Unix(1_000_000, 0), armed: make(chan struct{}, 1)}
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) After(d time.Duration) (<-chan time.Time, func()) {
	t := &fakeTimer{d: d, c: make(chan time.Time, 1)}
	f.mu.Lock()
	f.timers = append(f.timers, t)
	f.mu.Unlock()
	select {
	case f.armed <- struct{}{}:
	default:
	}
	return t.c, func() {
		f.mu.Lock()
		t.stopped = true
		f.mu.Unlock()
	}
}

// advance moves the clock without firing timers.
func (f *fakeClock) advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.mu.Unlock()
}

// fire waits until a timer is pending, advances the clock by its duration, fires it and
// returns the duration.
func (f *fakeClock) fire(t *testing.T) time.Duration {
	t.Helper()
	deadline := time.NewTimer(ctxtest.Timeout)
	defer deadline.Stop()
	for {
		f.mu.Lock()
		for i, tm := range f.timers {
			if !tm.stopped {
				f.timers = append(f.timers[:i:i], f.timers[i+1:]...)
				f.now = f.now.Add(tm.d)
				tm.c <- f.now
				f.mu.Unlock()
				return tm.d
			}
		}
		f.timers = nil
		f.mu.Unlock()
		select {
		case <-f.armed:
		case <-deadline.C:
			t.Fatal("fake clock: no timer was armed")
		}
	}
}

// pending reports the number of live timers.
func (f *fakeClock) pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, tm := range f.timers {
		if !tm.stopped {
			n++
		}
	}
	return n
}
