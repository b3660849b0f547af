//go:build unix

package transport

import (
	"errors"
	"os/exec"
	"syscall"
)

// startInOwnGroup makes the child the leader of a new process group whose
// id is its pid, so the whole tree it spawns (npx → sh → node, docker, …)
// can be signalled at once.
func startInOwnGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// terminateGroup asks every member of the group to exit (SIGTERM).
func terminateGroup(p *Process) { _ = syscall.Kill(-p.pgid, syscall.SIGTERM) }

// killGroup kills every member of the group (SIGKILL).
func killGroup(p *Process) { _ = syscall.Kill(-p.pgid, syscall.SIGKILL) }

// groupGone reports whether no live process remains in the group:
// kill(-pgid, 0) fails with ESRCH, or every remaining member is a zombie
// (already dead; under a PID 1 that does not reap orphans, killed
// grandchildren stay zombies forever and must not count as survivors).
func groupGone(p *Process) bool { return pgidGone(p.pgid) }

// pgidGone is groupGone for the group pgid.
func pgidGone(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	if errors.Is(err, syscall.ESRCH) {
		return true
	}
	// nil or EPERM: some member exists (EPERM: one we may not signal).
	return onlyZombiesInGroup(pgid)
}
