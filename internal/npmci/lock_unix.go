//go:build unix

package npmci

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive flock on f, waiting for the process that holds it, and returns
// what releases it.
func lockFile(f *os.File) (unlock func(), err error) {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return nil, err
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }, nil
}
