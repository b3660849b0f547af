package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/cordisgo/harness/bench/mcpbench"
)

// startupResult is the JSON line of `mcpbench startup`. Times are medians over the rounds,
// in milliseconds; the *CPUMs fields are the median processor time of the servers
// (children) and of the host during a parallel round.
type startupResult struct {
	Kind                string    `json:"kind"` // "startup"
	Servers             int       `json:"servers"`
	Rounds              int       `json:"rounds"`
	OneMs               float64   `json:"oneMs"`
	ParallelMs          float64   `json:"parallelMs"`
	SequentialMs        float64   `json:"sequentialMs"`
	OneServerCPUMs      float64   `json:"oneServerCPUMs"`
	ParallelServerCPUMs float64   `json:"parallelServerCPUMs"`
	ParallelHostCPUMs   float64   `json:"parallelHostCPUMs"`
	AllOneMs            []float64 `json:"allOneMs"`
	AllParallelMs       []float64 `json:"allParallelMs"`
	AllSequentialMs     []float64 `json:"allSequentialMs"`
}

func runStartup(cx context.Context, args []string) error {
	fs := newHarnessFlags("startup", "the harness binary; `PATH demo-server` is the server")
	servers := fs.Int("servers", 20, "servers per parallel or sequential round")
	rounds := fs.Int("rounds", 7, "timed rounds of each kind (interleaved); medians are reported")
	warmup := fs.Int("warmup", 1, "untimed rounds of each kind first")
	harness, err := fs.parse(args)
	if err != nil {
		return err
	}
	defer asTheBinary()() // the host runs as the harness binary does
	srv := mcpbench.HarnessServer(harness)
	logger := mcpbench.Logger()
	res := startupResult{Kind: "startup", Servers: *servers, Rounds: *rounds}
	var oneCPU, parCPU, parHost []float64
	for r := range *warmup + *rounds {
		timed := r >= *warmup
		for _, k := range []struct {
			n        int
			parallel bool
		}{{1, true}, {*servers, true}, {*servers, false}} {
			roundcx, cancel := context.WithTimeout(cx, 2*time.Minute)
			run, err := mcpbench.Startup(roundcx, logger, k.n, k.parallel, srv)
			cancel()
			if err != nil {
				return fmt.Errorf("startup of %d (parallel %v): %w", k.n, k.parallel, err)
			}
			if !timed {
				continue
			}
			wall := ms(run.Wall)
			switch {
			case k.n == 1:
				res.AllOneMs = append(res.AllOneMs, wall)
				oneCPU = append(oneCPU, ms(run.CPU.Children))
			case k.parallel:
				res.AllParallelMs = append(res.AllParallelMs, wall)
				parCPU = append(parCPU, ms(run.CPU.Children))
				parHost = append(parHost, ms(run.CPU.Self))
			default:
				res.AllSequentialMs = append(res.AllSequentialMs, wall)
			}
		}
	}
	res.OneMs = median(res.AllOneMs)
	res.ParallelMs = median(res.AllParallelMs)
	res.SequentialMs = median(res.AllSequentialMs)
	res.OneServerCPUMs = median(oneCPU)
	res.ParallelServerCPUMs = median(parCPU)
	res.ParallelHostCPUMs = median(parHost)
	return emit(res)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }

// median returns the median of xs (0 when empty) without modifying xs.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
