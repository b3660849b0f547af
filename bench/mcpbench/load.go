package mcpbench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Load is one timed run of calls.
type Load struct {
	// Calls is how many calls to make (after the warm-up).
	Calls int
	// Concurrency is how many calls are in flight at once (at least 1).
	Concurrency int
	// Warmup calls are made first, at the same concurrency, and not measured.
	Warmup int
	// MaxDuration bounds the timed part: when it has passed, no new call starts and the
	// run reports what completed (Stats.Truncated). 0 means no bound.
	MaxDuration time.Duration
}

// Stats is what a run measured. Latencies are per call, from just before the call to just
// after it returned.
type Stats struct {
	Calls       int     `json:"calls"`
	Concurrency int     `json:"concurrency"`
	Seconds     float64 `json:"seconds"`
	CallsPerSec float64 `json:"callsPerSec"`
	P50Us       float64 `json:"p50Us"`
	P99Us       float64 `json:"p99Us"`
	MaxUs       float64 `json:"maxUs"`
	MeanUs      float64 `json:"meanUs"`
	// Truncated is set when MaxDuration ended the run before Calls calls were made.
	Truncated bool `json:"truncated,omitempty"`
}

// Drive runs l against call: Warmup untimed calls, then Calls timed ones, with
// Concurrency workers taking the next call number until none is left. The first failing
// call stops the run and is returned.
func Drive(cx context.Context, l Load, call func(context.Context) error) (Stats, error) {
	if l.Calls < 1 {
		return Stats{}, errors.New("mcpbench: at least one call is needed")
	}
	conc := max(l.Concurrency, 1)
	if l.Warmup > 0 {
		if _, _, err := drive(cx, l.Warmup, conc, time.Time{}, nil, call); err != nil {
			return Stats{}, fmt.Errorf("warm-up: %w", err)
		}
	}
	lat := make([]time.Duration, l.Calls)
	var deadline time.Time
	if l.MaxDuration > 0 {
		deadline = time.Now().Add(l.MaxDuration)
	}
	done, elapsed, err := drive(cx, l.Calls, conc, deadline, lat, call)
	if err != nil {
		return Stats{}, err
	}
	st := Summarize(lat[:done], elapsed)
	st.Concurrency = conc
	st.Truncated = done < l.Calls
	return st, nil
}

// drive makes n calls on conc workers and records each latency into lat (when not nil) at
// the call's number. It returns how many calls completed and the wall time. A non-zero
// deadline stops the workers from taking further calls once it has passed; every call
// number taken is run, so the completed calls are the numbers below the count returned.
func drive(cx context.Context, n, conc int, deadline time.Time, lat []time.Duration, call func(context.Context) error) (int, time.Duration, error) {
	cx, cancel := context.WithCancel(cx)
	defer cancel()
	var (
		next    atomic.Int64
		stopped atomic.Bool
		errOnce sync.Once
		first   error
		wg      sync.WaitGroup
	)
	start := time.Now()
	for range min(conc, n) {
		wg.Go(func() {
			for !stopped.Load() {
				if !deadline.IsZero() && time.Now().After(deadline) {
					return
				}
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				t0 := time.Now()
				err := call(cx)
				d := time.Since(t0)
				if err != nil {
					errOnce.Do(func() { first = fmt.Errorf("call %d: %w", i, err) })
					stopped.Store(true)
					cancel()
					return
				}
				if lat != nil {
					lat[i] = d
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if first != nil {
		return 0, elapsed, first
	}
	return min(int(next.Load()), n), elapsed, nil
}

// Summarize computes the statistics of the latencies lat (which it sorts) measured over
// the wall time elapsed.
func Summarize(lat []time.Duration, elapsed time.Duration) Stats {
	st := Stats{Calls: len(lat), Seconds: elapsed.Seconds()}
	if len(lat) == 0 || elapsed <= 0 {
		return st
	}
	slices.Sort(lat)
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	st.CallsPerSec = float64(len(lat)) / elapsed.Seconds()
	st.P50Us = us(Percentile(lat, 50))
	st.P99Us = us(Percentile(lat, 99))
	st.MaxUs = us(lat[len(lat)-1])
	st.MeanUs = us(sum / time.Duration(len(lat)))
	return st
}

// Percentile returns the nearest-rank p-th percentile (0 < p ≤ 100) of sorted, which must
// be sorted ascending and not empty.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(float64(len(sorted))*p/100 + 0.9999999)
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
