//go:build !unix

package remote

import "os"

// processAlive reports whether a process with this id exists (on Windows FindProcess opens
// the process, which fails for one that is gone).
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}
