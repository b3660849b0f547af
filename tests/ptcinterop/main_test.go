//go:build unix

package ptcinterop

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cordisgo/harness/internal/npmci"

	"go.uber.org/goleak"
)

const installHint = "install them with `npm ci --prefix tests/ptcinterop --no-audit --no-fund` from the repository root (needs node and npm)"

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// bin returns the absolute path of an installed package's file (relative to
// node_modules), installing the pinned packages once when they are missing. Without node
// or npm the test is skipped, or fails when $CI is set.
func bin(t *testing.T, rel string) string {
	t.Helper()
	path := filepath.Join("node_modules", rel)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if err := npmci.Ensure(".", path); err != nil {
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
