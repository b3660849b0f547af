//go:build unix

package loopback

import (
	"errors"
	"syscall"
)

// ProcessAlive reports whether a process with this id exists (signal 0 checks without
// sending anything; EPERM means it exists under another user).
func ProcessAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
