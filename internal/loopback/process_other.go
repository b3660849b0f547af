//go:build !unix

package loopback

import "os"

// ProcessAlive reports whether a process with this id exists (on Windows FindProcess opens
// the process, which fails for one that is gone).
func ProcessAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}
