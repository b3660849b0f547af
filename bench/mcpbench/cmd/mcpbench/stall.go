package main

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/cordisgo/harness/bench/mcpbench"
)

// stallWatch diagnoses a call that does not return: once a call has been in flight for
// longer than after, it writes this process's goroutines to stderr and sends SIGQUIT to
// its child processes (the server), whose Go runtime then prints its goroutines to its own
// stderr (see serverWithStderr). It costs a mutex and a map operation per call.
type stallWatch struct {
	after time.Duration
	mu    sync.Mutex
	next  uint64
	calls map[uint64]time.Time
	fired bool
}

// wrap returns call, tracked; stop ends the watch.
func (w *stallWatch) wrap(call func(context.Context) error) (tracked func(context.Context) error, stop func()) {
	w.calls = map[uint64]time.Time{}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(max(w.after/4, time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				w.check(now)
			}
		}
	}()
	tracked = func(cx context.Context) error {
		w.mu.Lock()
		id := w.next
		w.next++
		w.calls[id] = time.Now()
		w.mu.Unlock()
		err := call(cx)
		w.mu.Lock()
		delete(w.calls, id)
		w.mu.Unlock()
		return err
	}
	return tracked, func() { close(done) }
}

func (w *stallWatch) check(now time.Time) {
	w.mu.Lock()
	var oldest time.Time
	for _, t := range w.calls {
		if oldest.IsZero() || t.Before(oldest) {
			oldest = t
		}
	}
	stalled := !w.fired && !oldest.IsZero() && now.Sub(oldest) > w.after
	if stalled {
		w.fired = true
	}
	w.mu.Unlock()
	if !stalled {
		return
	}
	fmt.Fprintf(os.Stderr, "mcpbench: a call has been in flight for %v; goroutines of the client follow, and the server is sent SIGQUIT\n", now.Sub(oldest).Round(time.Millisecond))
	_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 2)
	quitChildren()
}

// serverWithStderr runs s with its stderr appended to file, through sh (which execs it, so
// the server keeps the shell's process id).
func serverWithStderr(s mcpbench.Server, file string) mcpbench.Server {
	return mcpbench.Server{
		Command: "/bin/sh",
		Args:    append([]string{"-c", `f=$1; shift; exec "$@" 2>>"$f"`, "sh", file, s.Command}, s.Args...),
		Env:     s.Env,
	}
}
