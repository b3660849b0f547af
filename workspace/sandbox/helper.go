//go:build unix

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// HelperFailed is the exit status of a helper that could not run its command (a bad policy,
// a restriction the kernel refused, a command that does not start): what went wrong is on
// its stderr, prefixed "sandbox: ".
const HelperFailed = 125

// Main runs the sandbox helper and exits when the process was started as one (os.Args[1]
// is HelperArg); otherwise it returns at once. Call it first thing in main, and in TestMain
// of tests that run sandboxed commands through their own binary.
func Main() {
	if len(os.Args) < 2 || os.Args[1] != HelperArg {
		return
	}
	os.Exit(helper(os.Args[2:]))
}

// helper is the helper's body: args are the policy, "--" and the command.
func helper(args []string) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "sandbox: "+format+"\n", a...)
		return HelperFailed
	}
	if len(args) < 3 || args[1] != "--" {
		return fail("usage: %s POLICY -- COMMAND [ARG...]", HelperArg)
	}
	var p Policy
	if err := json.Unmarshal([]byte(args[0]), &p); err != nil {
		return fail("policy: %v", err)
	}
	// Supervision starts before anything else: a parent that dies from now on is noticed,
	// and one that died already is seen by its pid.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT)
	if err := watchParent(); err != nil {
		return fail("%v", err)
	}
	if p.Parent != 0 && os.Getppid() != p.Parent {
		return fail("the process that started the helper is gone")
	}
	parent := os.Getppid()
	if p.Landlock {
		if err := restrict(p); err != nil {
			return fail("%v", err)
		}
	}
	cmd := exec.Command(args[2], args[3:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return fail("starting %s: %v", args[2], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return exitCode(cmd, err)
		case s := <-sigs:
			if s == syscall.SIGHUP {
				// The parent died (its death signal), or the group is hung up on: nobody
				// waits for the command any more.
				killGroup(cmd)
			}
			// SIGTERM and SIGINT reach the whole group; the command decides, and whoever
			// sent them escalates.
		case <-tick.C:
			if os.Getppid() != parent {
				killGroup(cmd)
			}
		}
	}
}

// exitCode is the helper's exit status for the command's end: its own, or 128+N for a
// command killed by signal N, as shells report it.
func exitCode(cmd *exec.Cmd, err error) int {
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		fmt.Fprintf(os.Stderr, "sandbox: waiting for the command: %v\n", err)
		return HelperFailed
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}

// killGroup kills the helper's process group — the command and everything it started that
// stayed in the group — and the helper with it. A helper that leads no group (started
// without one of its own) kills its command only: the group is someone else's.
func killGroup(cmd *exec.Cmd) {
	if pid := os.Getpid(); syscall.Getpgrp() == pid {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	_ = cmd.Process.Kill()
	os.Exit(HelperFailed)
}
