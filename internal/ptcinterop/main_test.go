//go:build unix

package ptcinterop

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"go.uber.org/goleak"
)

const installHint = "install them with `npm ci --prefix internal/ptcinterop --no-audit --no-fund` from the repository root (needs node and npm)"

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// bin returns the absolute path of an installed package's file (relative to
// node_modules), installing the pinned packages once when they are missing. Without node
// or npm the test is skipped, or fails when $CI is set.
func bin(t *testing.T, rel string) string {
	t.Helper()
	path := filepath.Join("node_modules", rel)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if err := install(path); err != nil {
			unavailable(t, "the pinned npm packages are not installed and installing them failed: "+err.Error()+"; "+installHint)
		}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("%s: %v; reinstall: %s", rel, err, installHint)
	}
	return abs
}

// node returns the node executable.
func node(t *testing.T) string {
	t.Helper()
	n, err := exec.LookPath("node")
	if err != nil {
		unavailable(t, "node is not in PATH: "+err.Error())
	}
	return n
}

// install runs npm ci here once; a lock serialises concurrent test binaries.
func install(want string) error {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s is not in PATH", tool)
		}
	}
	lock, err := os.OpenFile(".install.lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("lock file: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("locking %s: %w", lock.Name(), err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(want); err == nil {
		return nil
	}
	fmt.Fprintln(os.Stderr, "ptcinterop: running npm ci --prefix . --no-audit --no-fund (once)")
	out, err := exec.Command("npm", "ci", "--prefix", ".", "--no-audit", "--no-fund").CombinedOutput()
	if err != nil {
		return fmt.Errorf("npm ci: %w\n%s", err, bytes.TrimSpace(out))
	}
	return nil
}

var skipOnce sync.Once

// unavailable skips loudly, or fails on CI.
func unavailable(t *testing.T, msg string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal(msg + " (CI is set: these tests must run, not skip)")
	}
	skipOnce.Do(func() { fmt.Fprintln(os.Stderr, "ptcinterop: SKIPPING: "+msg) })
	t.Skip("SKIPPED: " + msg)
}
