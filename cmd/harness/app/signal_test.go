//go:build linux

package app

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cordisgo/harness/testkit/proctest"
)

// These tests run the test binary as the harness in a subprocess, send it
// SIGTERM at a known point, and check that it exits promptly with the
// expected status and that no process it started survives it. They read
// the harness's JSON debug log to know where it is: the MCP client logs
// "mcp server started" with the server's pid (which is also its process
// group id: stdio servers run in groups of their own), and tools call logs
// "calling tool" just before it calls.

// exitDeadline is a generous bound on the harness's exit after a signal:
// the test only fails if the harness hangs.
const exitDeadline = 30 * time.Second

// harnessProc is a harness subprocess and the log records it wrote.
type harnessProc struct {
	cmd  *exec.Cmd
	logs chan map[string]any
	done chan struct{}
	err  error // of Wait, once done is closed
}

// startHarness starts the harness with JSON debug logs on its stderr.
func startHarness(t *testing.T, args ...string) *harnessProc {
	t.Helper()
	cmd := harnessCmd(t, append([]string{"--log-format", "json", "--log-level", "debug"}, args...)...)
	h := &harnessProc{cmd: cmd, logs: make(chan map[string]any, 1024), done: make(chan struct{})}
	exited := proctest.Start(t, cmd, func(line []byte) {
		var rec map[string]any
		if json.Unmarshal(line, &rec) == nil {
			h.logs <- rec // waitLog or a drain (exitOn, cleanup) reads it
		}
	})
	go func() {
		h.err = <-exited
		close(h.logs)
		close(h.done)
	}()
	t.Cleanup(func() {
		select {
		case <-h.done:
		default:
			_ = cmd.Process.Kill()
			go drain(h.logs)
			<-h.done
		}
	})
	return h
}

// waitLog returns the first record (from now on) whose msg is msg,
// failing the test if the harness ends first.
func (h *harnessProc) waitLog(t *testing.T, msg string) map[string]any {
	t.Helper()
	for rec := range h.logs {
		if rec["msg"] == msg {
			return rec
		}
	}
	t.Fatalf("the harness ended without logging %q (%v)", msg, h.err)
	return nil
}

// exitOn sends sig and waits, up to exitDeadline, for the exit status.
func (h *harnessProc) exitOn(t *testing.T, sig syscall.Signal) int {
	t.Helper()
	if err := h.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	go drain(h.logs)
	select {
	case <-h.done:
	case <-time.After(exitDeadline):
		t.Fatalf("the harness did not exit within %v of %v", exitDeadline, sig)
	}
	return h.cmd.ProcessState.ExitCode()
}

// drain reads logs to the end.
func drain(logs <-chan map[string]any) {
	for range logs {
	}
}

// checkNoSurvivors fails the test if a process recorded while the harness
// ran, or any process in one of the recorded process groups, is still
// alive.
func checkNoSurvivors(t *testing.T, recorded []proctest.Proc, pgids map[int]bool) {
	t.Helper()
	for _, p := range proctest.List(t) {
		if pgids[p.PGID] {
			t.Errorf("process %d (group %d) survived the harness", p.PID, p.PGID)
		}
		for _, r := range recorded {
			if r.PID == p.PID && r.Start == p.Start {
				t.Errorf("process %d, started by the harness, survived it", p.PID)
			}
		}
	}
}

// snapshot records the harness's descendants and their process groups, and
// the server pids the log named.
func snapshot(t *testing.T, h *harnessProc, serverPids ...int) ([]proctest.Proc, map[int]bool) {
	t.Helper()
	recorded := proctest.Descendants(proctest.List(t), h.cmd.Process.Pid)
	pgids := map[int]bool{}
	for _, p := range recorded {
		if p.PGID != h.cmd.Process.Pid && p.PGID != os.Getpid() {
			pgids[p.PGID] = true
		}
	}
	for _, pid := range serverPids {
		pgids[pid] = true
	}
	if len(recorded) < len(serverPids) {
		t.Fatalf("found %d processes under the harness, want at least %d", len(recorded), len(serverPids))
	}
	return recorded, pgids
}

func logPid(t *testing.T, rec map[string]any) int {
	t.Helper()
	pid, ok := rec["pid"].(float64)
	if !ok || pid <= 1 {
		t.Fatalf("no pid in %v", rec)
	}
	return int(pid)
}

// TestSIGTERMDuringStartup: the harness is told to stop while a server is
// still starting (a shell that never answers, with a child of its own in
// its process group): it exits with status 1 and leaves no process behind.
// The shell writes its pid to a FIFO when it runs.
func TestSIGTERMDuringStartup(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// O_RDWR: opening does not wait for a writer, and closing ends a read.
	f, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	script := "sleep 600 & echo $$ >" + fifo + "; wait"
	h := startHarness(t, "--stdio", "slow=/bin/sh -c '"+script+"'", "tools", "list")
	started := make(chan int, 1)
	go func() {
		line, _ := bufio.NewReader(f).ReadString('\n')
		pid, _ := strconv.Atoi(strings.TrimSpace(line))
		started <- pid
	}()
	var slow int
	select {
	case slow = <-started:
	case <-h.done:
		_ = f.Close()
		t.Fatalf("the harness ended before the server started: %v", h.err)
	}
	recorded, pgids := snapshot(t, h, slow)
	if len(recorded) < 2 {
		t.Fatalf("the server's shell and its child are not both running: %+v", recorded)
	}
	if code := h.exitOn(t, syscall.SIGTERM); code != ExitFailure {
		t.Errorf("exit status %d after SIGTERM during start-up, want %d", code, ExitFailure)
	}
	checkNoSurvivors(t, recorded, pgids)
}

// TestSIGTERMDuringCall: the harness is told to stop during a long tool
// call: the call is cancelled, the harness exits with status 1 and leaves
// no process behind.
func TestSIGTERMDuringCall(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "tools", "call", "mcp__demo__slow", `{"ms":60000}`)
	pid := logPid(t, h.waitLog(t, "mcp server started"))
	h.waitLog(t, "calling tool")
	recorded, pgids := snapshot(t, h, pid)
	began := time.Now()
	if code := h.exitOn(t, syscall.SIGTERM); code != ExitFailure {
		t.Errorf("exit status %d after SIGTERM during a call, want %d", code, ExitFailure)
	}
	t.Logf("exited %v after SIGTERM", time.Since(began).Round(time.Millisecond))
	checkNoSurvivors(t, recorded, pgids)
}

// TestSIGTERMRun: run shuts down cleanly on SIGTERM: exit status 0, no
// process left behind.
func TestSIGTERMRun(t *testing.T) {
	t.Parallel()
	h := startHarness(t, "run")
	pid := logPid(t, h.waitLog(t, "mcp server started"))
	h.waitLog(t, "running; interrupt to stop")
	recorded, pgids := snapshot(t, h, pid)
	if code := h.exitOn(t, syscall.SIGTERM); code != ExitOK {
		t.Errorf("exit status %d after SIGTERM, want %d", code, ExitOK)
	}
	checkNoSurvivors(t, recorded, pgids)
}

// TestSecondSignalEndsProcessGroups: a second signal during a shutdown that waits on a
// stubborn server (its shell ignores SIGTERM and waits on a grandchild that ignores it
// too) ends the harness at once, and still kills every server process group first: no
// orphan is left. Its exit status tells that exit from the clean shutdown's (ExitOK); how
// long it took is not asserted (the tests run in parallel on a busy machine).
func TestSecondSignalEndsProcessGroups(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script := `trap "" TERM; sleep 600 & '` + self + `' demo-server; wait`
	h := startHarness(t, "--stdio", "stubborn=/bin/sh -c '"+strings.ReplaceAll(script, "'", `'\''`)+"'",
		"--env", testMainEnv+"=1", "--set", "plugins.demo.enabled=false", "run")
	pid := logPid(t, h.waitLog(t, "mcp server started"))
	h.waitLog(t, "running; interrupt to stop")
	recorded, pgids := snapshot(t, h, pid)
	t.Cleanup(func() { // after a failure, leave nothing behind
		for pg := range pgids {
			_ = syscall.Kill(-pg, syscall.SIGKILL)
		}
	})
	if len(recorded) < 3 {
		t.Fatalf("want the shell, its sleep and the demo server under the harness: %+v", recorded)
	}
	if err := h.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	h.waitLog(t, "shutting down")
	if code := h.exitOn(t, syscall.SIGINT); code != ExitFailure {
		t.Errorf("exit status %d after a second signal, want %d", code, ExitFailure)
	}
	checkNoSurvivors(t, recorded, pgids)
}
