// Package procpolicy sets how many processors (GOMAXPROCS) the harness binary schedules its
// goroutines on: half of Go's default, at least one.
//
// Why: an MCP host is a relay between a model and server processes on the same machine. Its
// work per tool call is small (encode a request, write it to a pipe, wake on the answer,
// decode it); the servers do theirs in other processes. With Go's default, one processor per
// CPU, the host's idle processors wake up and spin looking for work every time an answer
// arrives, on the CPUs the servers need, and a goroutine woken by the network poller often
// runs on another thread than the one that found it. With fewer processors the answer is
// handled on the thread that read it. Measured on 2 vCPUs (docs/performance.md): a stdio
// tool call costs the host about 30 % less CPU at concurrency 1 and 20 % less at 16, and
// both throughput and tail latency improve.
//
// The policy is for a host, not for a process that serves over its standard input (the
// binary's demo-server command): standard input is usually read with blocking system calls,
// and a goroutine blocked in one holds its processor until the runtime takes it back, which
// with a single processor delays every other goroutine, including the one that writes the
// answer. Such a process calls ForStdioServer. Measured: a stdio demo server with one
// processor answered at about half the rate.
//
// The policy is the binary's, not the library's: packages never change a process's
// scheduler settings, and an explicit GOMAXPROCS in the environment always wins.
package procpolicy

import (
	"os"
	"runtime"
)

// Procs returns the policy's GOMAXPROCS for Go's default of def: half of it, at least one.
func Procs(def int) int { return max(1, def/2) }

// Apply sets GOMAXPROCS to Procs of the current default unless the GOMAXPROCS environment
// variable is set (then it changes nothing). It returns a function that restores the
// default (runtime.SetDefaultGOMAXPROCS); Apply and its result must not run concurrently
// with other changes of GOMAXPROCS.
func Apply() (restore func()) {
	if _, set := os.LookupEnv("GOMAXPROCS"); set {
		return func() {}
	}
	runtime.GOMAXPROCS(Procs(runtime.GOMAXPROCS(0)))
	return runtime.SetDefaultGOMAXPROCS
}

// ForStdioServer returns a process that serves over its standard input to Go's default
// GOMAXPROCS, unless the GOMAXPROCS environment variable is set.
func ForStdioServer() {
	if _, set := os.LookupEnv("GOMAXPROCS"); !set {
		runtime.SetDefaultGOMAXPROCS()
	}
}
