package gcpolicy

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
)

func TestPercent(t *testing.T) {
	for _, tc := range []struct {
		live uint64
		want int
	}{
		{0, 800},
		{300 << 10, 800},
		{MinHeap / 9, 800}, // 800 % above it: exactly MinHeap
		{8 << 20, 300},     // 8 MiB × 4 = 32 MiB
		{MinHeap / 2, 100}, // twice the live heap is MinHeap already
		{MinHeap, 100},
		{1 << 30, 100},
	} {
		if got := Percent(tc.live); got != tc.want {
			t.Errorf("Percent(%d) = %d, want %d", tc.live, got, tc.want)
		}
	}
	// The goal the percent gives is about max(MinHeap, 2 × live).
	for live := uint64(1 << 20); live <= 64<<20; live += 1 << 20 {
		p := Percent(live)
		goal := max(live*uint64(100+p)/100, 4<<20*uint64(p)/100)
		if want := max(MinHeap, 2*live); goal < want*95/100 || goal > want*105/100 {
			t.Errorf("live %d MiB: percent %d gives a goal of %d MiB, want about %d", live>>20, p, goal>>20, want>>20)
		}
	}
}

func TestStartStop(t *testing.T) {
	t.Setenv("GOGC", "150")
	if p := Start(); p != nil {
		t.Fatal("an explicit GOGC must win")
	}
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)

	p := startWithoutEnv(t)
	if got := debug.SetGCPercent(maxPercent); got != maxPercent || p.Current() != maxPercent {
		t.Fatalf("GC percent %d after Start (policy %d), want %d", got, p.Current(), maxPercent)
	}
	// After a collection with a large live heap the policy returns to Go's default.
	big := make([]*[1 << 20]byte, MinHeap>>20*3/4)
	for i := range big {
		big[i] = new([1 << 20]byte)
	}
	runtime.GC() // the live heap metric is updated by a collection
	p.afterGC()
	if p.Current() != 100 {
		t.Fatalf("with %d MiB live the policy set %d, want 100", len(big), p.Current())
	}
	runtime.KeepAlive(big)
	p.Stop()
	p.Stop()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GC percent %d after Stop, want 100", got)
	}
	var nilPolicy *Policy
	nilPolicy.Stop()
	if nilPolicy.Current() != 0 {
		t.Fatal("nil policy")
	}
}

// startWithoutEnv starts the policy as if GOGC were unset.
func startWithoutEnv(t *testing.T) *Policy {
	t.Helper()
	t.Setenv("GOGC", "")
	if err := os.Unsetenv("GOGC"); err != nil {
		t.Fatal(err)
	}
	p := Start()
	if p == nil {
		t.Fatal("Start returned nil without GOGC")
	}
	return p
}
