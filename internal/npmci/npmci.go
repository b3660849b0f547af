// Package npmci installs the npm packages that a test suite pins in a directory of its own
// (package.json and package-lock.json, never node_modules in the repository): Ensure runs
// `npm ci` there once, when a file the installation makes is missing, so that `go test
// ./...` on a fresh machine runs those suites instead of skipping them. Test binaries that
// go test runs in parallel on the same directory are serialised by a lock file: the first
// installs, the others wait and find the packages. Suite is what those suites share on top
// of it: finding node and the installed files, checking the pinned versions, and the skip
// (or, when $CI is set, the failure) when something is missing.
//
// Ensure is safe for concurrent use, across processes too. The lock is a flock, on unix only:
// elsewhere Ensure finds installed packages but installs none (npm ci --prefix DIR does).
package npmci

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
)

// ErrNoNode is matched by the error of Ensure when node or npm is not in PATH.
var ErrNoNode = errors.New("node and npm are needed")

// Ensure installs the packages of dir with `npm ci --prefix dir --no-audit --no-fund`
// unless marker (a path relative to dir that the installation makes, such as
// node_modules/PKG/package.json) exists. It says on stderr that it installs. The error
// names what is missing, or carries npm's output.
func Ensure(dir, marker string) error {
	path := filepath.Join(dir, marker)
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%w: %s is not in PATH", ErrNoNode, tool)
		}
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".install.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("lock file: %w", err)
	}
	defer func() { _ = lock.Close() }()
	unlock, err := lockFile(lock)
	if err != nil {
		return fmt.Errorf("locking %s: %w", lock.Name(), err)
	}
	defer unlock() // closing the file releases it too
	if _, err := os.Stat(path); err == nil {
		return nil // installed by another test binary while this one waited
	}
	fmt.Fprintf(os.Stderr, "npmci: %s is not installed: running npm ci --prefix %s --no-audit --no-fund (once)\n", marker, dir)
	out, err := exec.Command("npm", "ci", "--prefix", dir, "--no-audit", "--no-fund").CombinedOutput()
	if err != nil {
		return fmt.Errorf("npm ci --prefix %s: %w\n%s", dir, err, bytes.TrimSpace(out))
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("npm ci --prefix %s succeeded but %s is missing", dir, marker)
	}
	return nil
}
