//go:build unix

package transport

import (
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// Group is a process group a command started with [OwnGroup] leads: its id is the
// command's pid, and every process it spawns that does not leave the group (setsid) is a
// member. Ending it ends the whole tree at once, as a stdio server's is ended. A Group is a
// plain value.
type Group int

// OwnGroup makes cmd's process, once started, the leader of a new process group: the
// group's id is then cmd.Process.Pid.
func OwnGroup(cmd *exec.Cmd) { startInOwnGroup(cmd) }

// Gone reports whether no live process remains in the group (zombies do not count).
func (g Group) Gone() bool { return pgidGone(int(g)) }

// Kill kills every member of the group (SIGKILL) without waiting.
func (g Group) Kill() { _ = syscall.Kill(-int(g), syscall.SIGKILL) }

// End ends the group: SIGTERM, grace (0: 2 s) for its members to exit, then SIGKILL and a
// couple of seconds to disappear. It returns an error wrapping [ErrCleanupIncomplete] when
// members are still alive after that.
func (g Group) End(grace time.Duration) error {
	gone := endGroup(groupEnd{
		term: func() { _ = syscall.Kill(-int(g), syscall.SIGTERM) },
		kill: g.Kill,
		gone: g.Gone,
	}, orDefault(grace, defaultKillGrace))
	if !gone {
		return fmt.Errorf("process group %d: %w", int(g), ErrCleanupIncomplete)
	}
	return nil
}
