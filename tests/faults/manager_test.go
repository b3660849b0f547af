//go:build faults

package faults

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/mcpmanager"
	"github.com/cordisgo/harness/plugins/toolregistry"

	"github.com/cordisgo/harness/testkit/mcptest"
	"github.com/cordisgo/harness/testkit/regtest"
)

// raceBound bounds the racing phase of scenario 7: past it, something is deadlocked.
const raceBound = 90 * time.Second

// Scenario 7: settings file edits racing restarts and probes (run under -race): no panic, no
// deadlock, and the final state matches the file.
func TestSettingsEditsRaceRestartsAndProbes(t *testing.T) {
	lc := checkLeaks(t)
	ev := mcptest.NewEvents(t, lc.addGroup)
	exe, env := mcptest.Stdio(t, mcptest.Normal, "")
	root := ctxtest.New(t)
	ctxtest.MountActive(t, root, toolregistry.Plugin, nil)
	dir := t.TempDir()
	settings := filepath.Join(dir, "mcp-servers.yaml")

	// render writes the settings: each name in order, enabled or not, its args naming the
	// generation so that a changed entry is a replaced instance.
	type server struct {
		name    string
		enabled bool
		gen     int
	}
	render := func(servers []server) string {
		var b strings.Builder
		b.WriteString("servers:\n")
		if len(servers) == 0 {
			return "servers: {}\n"
		}
		for _, s := range servers {
			fmt.Fprintf(&b, "  %s:\n    enabled: %v\n    transport: stdio\n    command: %q\n    args: [\"gen-%d\"]\n", s.name, s.enabled, exe, s.gen)
			fmt.Fprintf(&b, "    env: {%s: %s, %s: %q}\n", mcptest.ModeEnv, env[mcptest.ModeEnv], mcptest.EventsEnv, ev.Path())
			b.WriteString("    startupTimeoutMs: 10000\n    reconnect: {initialDelayMs: 10, maxDelayMs: 50, maxAttempts: 3}\n")
		}
		return b.String()
	}
	write := func(servers []server) {
		if err := os.WriteFile(settings, []byte(render(servers)), 0o644); err != nil {
			t.Error(err)
		}
	}
	names := []string{"a", "b", "c", "d"}
	write([]server{{"a", true, 0}, {"b", true, 0}, {"c", true, 0}})

	scope := ctxtest.Mount(t, root, mcpmanager.Plugin, map[string]any{
		"settingsFile": settings, "credentialsFile": filepath.Join(dir, "credentials.yaml"), "debounceMs": 10})
	if err := scope.Wait(ctxtest.Wait(t)); err != nil {
		t.Fatalf("manager load: %v", err)
	}
	m, ok := mcpmanager.Key.Get(root)
	if !ok {
		t.Fatal("no mcpManager")
	}
	waitSnapshot(t, m, "a, b and c connected", func(s mcpmanager.Snapshot) bool {
		return statusOf(s, "a") == mcpmanager.StateConnected && statusOf(s, "b") == mcpmanager.StateConnected &&
			statusOf(s, "c") == mcpmanager.StateConnected
	})

	// Errors a racing restart or probe may meet: the name is gone or disabled at that
	// moment, or it is being replaced. Anything else is a failure.
	expected := func(err error) bool {
		return err == nil || errors.Is(err, mcpmanager.ErrNotFound) || errors.Is(err, mcpmanager.ErrConflict)
	}
	var wg sync.WaitGroup
	var restarts, probes, edits, refused int
	var mu sync.Mutex
	count := func(n *int, err error) {
		mu.Lock()
		*n++
		if err != nil {
			refused++
		}
		mu.Unlock()
	}
	wg.Add(3)
	go func() { // the editor
		defer wg.Done()
		r := rand.New(rand.NewPCG(1, 2))
		for i := 1; i <= 40; i++ {
			var servers []server
			for _, n := range names {
				if r.IntN(4) > 0 { // present three times in four
					servers = append(servers, server{n, r.IntN(4) > 0, r.IntN(3)})
				}
			}
			write(servers)
			count(&edits, nil)
			// Sometimes within the debounce (10 ms), mostly after it: both coalesced
			// and applied edits race the others.
			time.Sleep(time.Duration(r.IntN(80)) * time.Millisecond)
		}
	}()
	// A racer calls op n times, each on a name drawn at random and followed by a pause of up
	// to 20 ms.
	racer := func(seed uint64, n int, what string, calls *int, op func(cx context.Context, name string) error) {
		defer wg.Done()
		r := rand.New(rand.NewPCG(seed, seed+1))
		for range n {
			cx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err := op(cx, names[r.IntN(len(names))])
			cancel()
			if !expected(err) {
				t.Errorf("%s: %v", what, err)
			}
			count(calls, err)
			time.Sleep(time.Duration(r.IntN(20)) * time.Millisecond)
		}
	}
	go racer(3, 40, "restart", &restarts, m.Restart)
	go racer(5, 20, "probe", &probes, func(cx context.Context, name string) error {
		res, err := m.Probe(cx, name, mcpmanager.ProbeOptions{BudgetMs: 20_000})
		if err == nil && !res.OK() && !res.Cancelled {
			t.Errorf("probe of a working server failed: %s %s", res.Stage, res.Err)
		}
		return err
	})
	raced := make(chan struct{})
	go func() {
		wg.Wait()
		close(raced)
	}()
	began := time.Now()
	within(t, raceBound, "the race of edits, restarts and probes", raced)
	t.Logf("%d edits, %d restarts, %d probes (%d refused as not found or conflict) in %v",
		edits, restarts, probes, refused, time.Since(began).Round(time.Millisecond))

	// The final state matches the file.
	final := []server{{"d", true, 7}, {"a", true, 7}, {"b", false, 7}}
	write(final)
	snap := waitSnapshot(t, m, "the final settings applied", func(s mcpmanager.Snapshot) bool {
		var got []string
		for _, v := range s.Servers {
			if v.Removed {
				return false
			}
			got = append(got, v.Name)
		}
		if !slices.Equal(got, []string{"d", "a", "b"}) || s.Settings.Error != "" {
			return false
		}
		for _, v := range s.Servers {
			want := mcpmanager.StateConnected
			if v.Name == "b" {
				want = mcpmanager.StateDisabled
			}
			if v.Status != want || !slices.Equal(v.Config.Args, []string{"gen-7"}) {
				return false
			}
		}
		return true
	})
	reg, ok := toolregistry.Key.Get(root)
	if !ok {
		t.Fatal("no tools service")
	}
	tools := regtest.Names(reg, root, "")
	want := append(regtest.PublicTools("a", mcptest.StdioTools...), regtest.PublicTools("d", mcptest.StdioTools...)...)
	if !slices.Equal(tools, want) {
		t.Errorf("registered tools %v, want %v", tools, want)
	}
	t.Logf("final: %d servers, version %d, %d server processes started in all", len(snap.Servers), snap.Version, ev.Count(0, "start"))
	if err := scope.Dispose(ctxtest.Wait(t)); err != nil {
		t.Errorf("manager dispose: %v", err)
	}
}

func statusOf(s mcpmanager.Snapshot, name string) mcpmanager.State {
	for _, v := range s.Servers {
		if v.Name == name && !v.Removed {
			return v.Status
		}
	}
	return ""
}

// waitSnapshot waits until pred holds for the manager's snapshot.
func waitSnapshot(t *testing.T, m *mcpmanager.Manager, what string, pred func(mcpmanager.Snapshot) bool) mcpmanager.Snapshot {
	t.Helper()
	cx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	var last mcpmanager.Snapshot
	for snap := range m.Watch(cx) {
		if last = snap; pred(snap) {
			return snap
		}
	}
	var b strings.Builder
	for _, v := range last.Servers {
		fmt.Fprintf(&b, "  %s removed=%v %s %q args=%v\n", v.Name, v.Removed, v.Status, v.Error, v.Config.Args)
	}
	t.Fatalf("%s: not reached within %v; settings %+v; last snapshot:\n%s", what, waitBound, last.Settings, b.String())
	return last
}
