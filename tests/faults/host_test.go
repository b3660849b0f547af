//go:build faults

package faults

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cordisgo/harness/cmd/harness/app"
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
	cmd.Stdout = io.Discard
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var tail strings.Builder // stderr lines that are not log records: panics, fatal errors
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			var rec map[string]any
			if json.Unmarshal(sc.Bytes(), &rec) != nil {
				tail.WriteString(sc.Text() + "\n")
			}
		}
	}()
	exited := make(chan error, 1)
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			t.Logf("harness killed at clean-up: %v", <-exited)
		}
	})
	go func() {
		<-readDone // read stderr to its end before Wait closes it
		exited <- cmd.Wait()
	}()

	// The servers are started when 20 process-group leaders run below the harness (the
	// client logs "mcp server started" only once a server answered). They are all
	// mid-startup: each waits a minute before serving.
	var below []proc
	deadline := time.Now().Add(waitBound)
	for leaders := 0; leaders < servers; {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d servers started within %v", leaders, servers, waitBound)
		}
		time.Sleep(20 * time.Millisecond)
		below, leaders = below[:0], 0
		all := processes(t)
		for _, p := range all {
			if descendsFrom(all, p, cmd.Process.Pid) {
				below = append(below, p)
				if p.pgrp == p.pid {
					leaders++
				}
			}
		}
	}
	for _, p := range below {
		if p.pgrp != cmd.Process.Pid {
			lc.addGroup(p.pgrp)
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
	now := processes(t)
	for _, b := range below {
		for _, p := range now {
			if p.pid == b.pid && p.pgrp == b.pgrp {
				t.Errorf("process %d (%s), started below the harness, survived it", p.pid, p.comm)
			}
		}
	}
	t.Logf("%d processes below the harness; exit status %d %v after SIGTERM", len(below), code, took.Round(time.Millisecond))
}

// descendsFrom reports whether p's parent chain reaches pid.
func descendsFrom(all []proc, p proc, pid int) bool {
	byPid := make(map[int]proc, len(all))
	for _, q := range all {
		byPid[q.pid] = q
	}
	for q, ok := p, true; ok && q.ppid > 1; q, ok = byPid[q.ppid] {
		if q.ppid == pid {
			return true
		}
	}
	return false
}
