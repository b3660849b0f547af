//go:build faults

package faults

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cordisgo/harness/cmd/harness/app"
	"github.com/cordisgo/harness/testkit/proctest"
)

// hostGrace is the harness's --shutdown-timeout in this scenario: its grace period.
const hostGrace = 10 * time.Second

// Scenario 6: the host receiving SIGTERM with 20 servers mid-startup exits cleanly within its
// grace period, and every child process is gone. The harness is this test binary re-executed
// as the harness (cmd/harness/app.Main); its servers are the harness's demo server, again
// this binary, told to wait a minute before serving (demo-server --start-delay).
func TestHostSIGTERMWith20ServersStarting(t *testing.T) {
	lc := checkLeaks(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--log-format", "json", "--log-level", "debug", "-p", "cli",
		"--shutdown-timeout", hostGrace.String()}
	const servers = 20
	for i := range servers {
		args = append(args, "--stdio", fmt.Sprintf("s%02d='%s' demo-server --start-delay 60s", i, exe))
	}
	args = append(args, "tools", "list")
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), harnessEnv+"=1")
	var tail strings.Builder // stderr lines that are not log records: panics, fatal errors
	exited := proctest.Start(t, cmd, func(line []byte) {
		var rec map[string]any
		if json.Unmarshal(line, &rec) != nil {
			tail.Write(line)
			tail.WriteByte('\n')
		}
	})

	// The servers are started when 20 process-group leaders run below the harness (the
	// client logs "mcp server started" only once a server answered). They are all
	// mid-startup: each waits a minute before serving.
	var below []proctest.Proc
	deadline := time.Now().Add(waitBound)
	for leaders := 0; leaders < servers; {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d servers started within %v", leaders, servers, waitBound)
		}
		time.Sleep(20 * time.Millisecond)
		below, leaders = proctest.Descendants(proctest.List(t), cmd.Process.Pid), 0
		for _, p := range below {
			if p.PGID == p.PID {
				leaders++
			}
		}
	}
	for _, p := range below {
		if p.PGID != cmd.Process.Pid {
			lc.addGroup(p.PGID)
		}
	}

	signalled := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		// Wait reports a non-zero status as an *exec.ExitError (checked below); any other
		// error means the process could not be waited for.
		if _, status := errors.AsType[*exec.ExitError](err); err != nil && !status {
			t.Fatalf("waiting for the harness: %v", err)
		}
	case <-time.After(hostGrace + 5*time.Second):
		t.Fatalf("the harness did not exit within %v of SIGTERM (grace period %v)", hostGrace+5*time.Second, hostGrace)
	}
	took := time.Since(signalled)
	if took > hostGrace {
		t.Errorf("the harness exited %v after SIGTERM, beyond its grace period %v", took, hostGrace)
	}
	code := cmd.ProcessState.ExitCode()
	// An interrupted command exits with status 1 (0 is for run, which is meant to be
	// stopped); anything else, or a signal death, is not a clean exit.
	if code != app.ExitFailure {
		t.Errorf("exit status %d after SIGTERM during start-up, want %d", code, app.ExitFailure)
	}
	if !strings.Contains(tail.String(), "harness: interrupted during start-up") {
		t.Errorf("the harness did not say it was interrupted during start-up:\n%s", tail.String())
	}
	if strings.Contains(tail.String(), "panic") || strings.Contains(tail.String(), "goroutine ") {
		t.Errorf("the harness crashed:\n%s", tail.String())
	}
	// Every child is gone when the harness has exited, not merely later.
	now := proctest.List(t)
	for _, b := range below {
		for _, p := range now {
			if p.PID == b.PID && p.PGID == b.PGID {
				t.Errorf("process %d (%s), started below the harness, survived it", p.PID, p.Comm)
			}
		}
	}
	t.Logf("%d processes below the harness; exit status %d %v after SIGTERM", len(below), code, took.Round(time.Millisecond))
}
