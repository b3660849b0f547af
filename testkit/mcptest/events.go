package mcptest

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// WaitTimeout bounds [Events.Wait] and how long a connection from a server is read.
var WaitTimeout = 20 * time.Second

// Event is one report of a stdio test server: what it saw, and its pid (which is its
// process group id when it runs in a group of its own, as stdio servers do).
type Event struct {
	Kind string // start, initialize, list, cancelled, call, stormed
	PID  int
}

// Events collects the reports of stdio test servers on a Unix socket: give a server
// [Events.Path] as [EventsEnv]. It is closed when the test ends.
//
// An Events is safe for concurrent use.
type Events struct {
	path    string
	ln      net.Listener
	onStart func(pid int)
	mu      sync.Mutex
	list    []Event
	signal  chan struct{}
	wg      sync.WaitGroup
}

// NewEvents listens for events; onStart, if not nil, is called with the pid of every
// server that starts (before the event is recorded).
func NewEvents(t testing.TB, onStart func(pid int)) *Events {
	t.Helper()
	// Unix socket paths are short (108 bytes); t.TempDir's may not be.
	dir, err := os.MkdirTemp("", "mcptest")
	if err != nil {
		t.Fatal(err)
	}
	ev := &Events{path: filepath.Join(dir, "ev.sock"), onStart: onStart, signal: make(chan struct{}, 1)}
	if ev.ln, err = net.Listen("unix", ev.path); err != nil {
		t.Fatal(err)
	}
	ev.wg.Add(1)
	go ev.accept()
	t.Cleanup(func() {
		_ = ev.ln.Close()
		ev.wg.Wait()
		_ = os.RemoveAll(dir)
	})
	return ev
}

// Path is the socket's path, the value of [EventsEnv].
func (ev *Events) Path() string { return ev.path }

func (ev *Events) accept() {
	defer ev.wg.Done()
	for {
		c, err := ev.ln.Accept()
		if err != nil {
			return
		}
		ev.wg.Add(1)
		go func() {
			defer ev.wg.Done()
			defer func() { _ = c.Close() }()
			_ = c.SetReadDeadline(time.Now().Add(WaitTimeout))
			sc := bufio.NewScanner(c)
			for sc.Scan() {
				kind, pidText, _ := strings.Cut(sc.Text(), " ")
				pid, _ := strconv.Atoi(pidText)
				if kind == "start" && ev.onStart != nil {
					ev.onStart(pid)
				}
				ev.mu.Lock()
				ev.list = append(ev.list, Event{kind, pid})
				ev.mu.Unlock()
				select {
				case ev.signal <- struct{}{}:
				default:
				}
			}
		}()
	}
}

// Mark returns the number of events so far: Wait(from) and Count(from) see only later
// ones.
func (ev *Events) Mark() int {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	return len(ev.list)
}

// Count returns how many events of kind arrived after from.
func (ev *Events) Count(from int, kind string) int {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	n := 0
	for _, e := range ev.list[from:] {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// Wait returns the first event of kind after from, failing the test after
// [WaitTimeout].
func (ev *Events) Wait(t testing.TB, from int, kind string) Event {
	t.Helper()
	deadline := time.NewTimer(WaitTimeout)
	defer deadline.Stop()
	for {
		ev.mu.Lock()
		for _, e := range ev.list[from:] {
			if e.Kind == kind {
				ev.mu.Unlock()
				return e
			}
		}
		ev.mu.Unlock()
		select {
		case <-ev.signal:
		case <-deadline.C:
			t.Fatalf("mcptest: no %q event from a test server within %v", kind, WaitTimeout)
		}
	}
}
