// Package ctxbench holds the scope-tree workloads that bench/ctxbench.sh runs side by side
// with the same workloads on the Cordis npm package (bench/cordis/workloads.mjs). Each
// benchmark runs one whole workload per iteration; setup that the Cordis side does not time
// is excluded with b.StopTimer.
package ctxbench
