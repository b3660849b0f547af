//go:build unix

package interop

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/internal/npmci"
)

// The installed server package, relative to this directory (the tests' working directory).
const (
	packageName = "@modelcontextprotocol/server-everything"
	packageDir  = "node_modules/" + packageName
	installHint = "install it with `npm ci --prefix tests/interop --no-audit --no-fund` from the repository root (needs node and npm)"
)

func TestMain(m *testing.M) {
	if os.Getenv(relaySocketEnv) != "" {
		// The test binary re-executed by the plugin as a stdio relay (see runRelay).
		os.Exit(runRelay())
	}
	goleak.VerifyTestMain(m)
}

// server is the installed reference server: how to run it.
type server struct {
	node    string // absolute path of the node executable
	entry   string // absolute path of the package's bin script
	version string // installed version, equal to the pinned one
}

// locate finds node and the installed package. Anything missing skips the test with a hint,
// or fails it when $CI is set, so that CI cannot pass by skipping.
func locate(t *testing.T) server {
	t.Helper()
	var pinned struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	readJSON(t, "package.json", &pinned)
	want := pinned.Dependencies[packageName]
	if want == "" {
		t.Fatalf("package.json does not pin %s", packageName)
	}

	manifest := filepath.Join(packageDir, "package.json")
	if _, err := os.Stat(manifest); errors.Is(err, fs.ErrNotExist) {
		if err := npmci.Ensure(".", manifest); err != nil {
			unavailable(t, packageName+" is not installed in tests/interop/node_modules and installing it failed: "+err.Error()+"; "+installHint)
		}
	}
	var installed struct {
		Version string            `json:"version"`
		Bin     map[string]string `json:"bin"`
	}
	readJSON(t, manifest, &installed)
	if installed.Version != want {
		t.Fatalf("installed %s is %s but package.json pins %s; reinstall: %s", packageName, installed.Version, want, installHint)
	}
	bin := installed.Bin["mcp-server-everything"]
	if bin == "" {
		t.Fatalf("%s %s declares no mcp-server-everything bin: %v", packageName, installed.Version, installed.Bin)
	}
	entry, err := filepath.Abs(filepath.Join(packageDir, bin))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(entry); err != nil {
		t.Fatalf("the bin script of %s: %v; reinstall: %s", packageName, err, installHint)
	}

	node, err := exec.LookPath("node")
	if err != nil {
		unavailable(t, "node is not in PATH ("+err.Error()+"); the interop tests run "+packageName+" with it")
	}
	if node, err = filepath.Abs(node); err != nil {
		t.Fatal(err)
	}
	return server{node: node, entry: entry, version: installed.Version}
}

// unavailable skips the test loudly, or fails it on CI. go test hides the output of a
// package that passes, so a skip would show as a bare "ok": the notice is also written to
// the controlling terminal, if there is one, where the person who ran go test sees it.
func unavailable(t *testing.T, msg string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal(msg + " (CI is set: the interop tests must run, not skip)")
	}
	skipOnce.Do(func() {
		notice := "interop: SKIPPING the interoperability tests: " + msg + "\n"
		fmt.Fprint(os.Stderr, notice)
		if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
			fmt.Fprint(tty, notice)
			_ = tty.Close()
		}
	})
	t.Skip("SKIPPED: " + msg)
}

// skipOnce prints the skip notice once per test binary.
var skipOnce sync.Once

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
