//go:build faults

package faults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/toolregistry"

	"github.com/cordisgo/harness/testkit/mcptest"
	"github.com/cordisgo/harness/testkit/proctest"
	"github.com/cordisgo/harness/testkit/regtest"
)

// waitBound bounds every wait of the suite that is not itself the subject of an assertion:
// the test fails rather than hangs.
const waitBound = 20 * time.Second

func init() { ctxtest.Timeout = waitBound }

// ---- leaks -------------------------------------------------------------------------------

// leakCheck records what a test starts and checks, when the test ends (after everything
// else it cleans up), that none of it is left: goroutines, file descriptors, and every
// member of the process groups it recorded.
type leakCheck struct {
	mu    sync.Mutex
	pgids map[int]bool
}

// checkLeaks must be called first in a test, so that its check runs last.
func checkLeaks(t *testing.T) *leakCheck {
	t.Helper()
	lc := &leakCheck{pgids: map[int]bool{}}
	ignore := goleak.IgnoreCurrent()
	fds := countFDs(t)
	t.Cleanup(func() {
		lc.mu.Lock()
		pgids := maps2slice(lc.pgids)
		lc.mu.Unlock()
		for _, p := range proctest.List(t) {
			if slices.Contains(pgids, p.PGID) {
				t.Errorf("process %d (%s) of server process group %d survived", p.PID, p.Comm, p.PGID)
			}
		}
		// Descriptors are closed by the goroutines that own them, which goleak waits
		// for; poll briefly so a close that is still running is not counted. No
		// tolerance: every descriptor the test opened must be closed.
		deadline := time.Now().Add(5 * time.Second)
		n := countFDs(t)
		for n > fds && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			n = countFDs(t)
		}
		if n > fds {
			t.Errorf("file descriptors: %d before the test, %d after:\n%s", fds, n, listFDs())
		}
		if err := goleak.Find(ignore); err != nil {
			t.Errorf("goroutines leaked: %v", err)
		}
		t.Logf("leak check: %d server process groups gone, %d descriptors before and %d after, no goroutine left", len(pgids), fds, n)
	})
	return lc
}

func (lc *leakCheck) addGroup(pgid int) {
	lc.mu.Lock()
	lc.pgids[pgid] = true
	lc.mu.Unlock()
}

func maps2slice(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func countFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents) - 1 // the directory being read
}

func listFDs() string {
	ents, _ := os.ReadDir("/proc/self/fd")
	var b strings.Builder
	for _, e := range ents {
		target, _ := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		fmt.Fprintf(&b, "  %s -> %s\n", e.Name(), target)
	}
	return b.String()
}

// ---- status reports ---------------------------------------------------------------------

// statusLog records every status report (mcpclient.StatusEvent).
type statusLog struct {
	rec *ctxtest.Recorder[mcpclient.Status]
}

// of returns the reports of server.
func of(all []mcpclient.Status, server string) []mcpclient.Status {
	var out []mcpclient.Status
	for _, st := range all {
		if st.Server == server {
			out = append(out, st)
		}
	}
	return out
}

func (l *statusLog) count(server string, p mcpclient.Phase) int {
	n := 0
	for _, st := range of(l.rec.Events(), server) {
		if st.Phase == p {
			n++
		}
	}
	return n
}

// waitFor waits until pred holds for the reports of server and returns the last one.
func (l *statusLog) waitFor(t *testing.T, server, what string, pred func([]mcpclient.Status) bool) mcpclient.Status {
	t.Helper()
	var mine []mcpclient.Status
	l.rec.WaitFor(t, func(all []mcpclient.Status) bool {
		mine = of(all, server)
		return len(mine) > 0 && pred(mine)
	})
	return mine[len(mine)-1]
}

// waitPhase waits until the last report of server is in phase p.
func (l *statusLog) waitPhase(t *testing.T, server string, p mcpclient.Phase) mcpclient.Status {
	t.Helper()
	return l.waitFor(t, server, string(p), func(all []mcpclient.Status) bool { return all[len(all)-1].Phase == p })
}

// ---- a host with the tool registry and MCP clients ----------------------------------------

// fixture is a tree with the tool registry and a status sink, for client scenarios.
type fixture struct {
	t    *testing.T
	lc   *leakCheck
	ev   *mcptest.Events // what its stdio servers report
	root *ctx.Context
	reg  *toolregistry.Registry
	st   *statusLog
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	lc := checkLeaks(t)
	f := &fixture{t: t, lc: lc, ev: mcptest.NewEvents(t, lc.addGroup)}
	f.root = ctxtest.New(t)
	f.st = &statusLog{rec: ctxtest.Record(t, f.root, mcpclient.StatusEvent)}
	ctxtest.MountActive(t, f.root, toolregistry.Plugin, nil)
	reg, ok := toolregistry.Key.Get(f.root)
	if !ok {
		t.Fatal("no tools service")
	}
	f.reg = reg
	return f
}

// stdio returns the client configuration of a stdio test server in mode, reporting its
// events to f.ev, with small delays; over replaces keys.
func (f *fixture) stdio(name string, mode mcptest.Mode, over map[string]any) map[string]any {
	command, env := mcptest.Stdio(f.t, mode, name)
	env[mcptest.EventsEnv] = f.ev.Path()
	cfg := map[string]any{
		"serverName": name,
		"transport":  "stdio",
		"command":    command,
		"env":        env,
		"reconnect":  map[string]any{"initialDelayMs": 10, "maxDelayMs": 50, "maxAttempts": 3},
	}
	for k, v := range over {
		cfg[k] = v
	}
	return cfg
}

// mount mounts a client and waits for its activation (its first connection attempt).
func (f *fixture) mount(cfg map[string]any) *ctx.Scope {
	f.t.Helper()
	s := ctxtest.Mount(f.t, f.root, mcpclient.Plugin, cfg)
	if err := s.Wait(ctxtest.Wait(f.t)); err != nil {
		f.t.Fatalf("client activation: %v", err)
	}
	return s
}

// call executes a tool as the model would.
func (f *fixture) call(tool, args string) (*toolregistry.Result, error) {
	return f.reg.Execute(f.root, f.root, tool, json.RawMessage(args), toolregistry.ExecOptions{})
}

// mustCall executes a tool and returns its text, failing the test on an error.
func (f *fixture) mustCall(tool, args string) string {
	f.t.Helper()
	res, err := f.call(tool, args)
	if err != nil {
		f.t.Fatalf("%s: %v", tool, err)
	}
	return res.Text()
}

// tools returns the names of the registered tools with the prefix.
func (f *fixture) tools(prefix string) []string { return regtest.Names(f.reg, f.root, prefix) }

// within waits for done, failing the test after d.
func within(t *testing.T, d time.Duration, what string, done <-chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not finish within %v (deadlock?)", what, d)
	}
}

var _ = errors.Is
var _ = context.Background
