package npmci

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Suite is a test suite that runs npm packages pinned in a directory of its own with node:
// the interoperability suites under tests/ and the authorization server of
// internal/oauthtest. Its methods install the packages when they are missing (Ensure) and,
// when node, npm or a package cannot be had, skip the test with a notice, or fail it when
// $CI is set, so that CI cannot pass by skipping.
//
// A Suite is a plain value; its methods are safe for concurrent use.
type Suite struct {
	// Name names the suite in notices, as in "the interop tests".
	Name string
	// Dir is the directory with package.json and package-lock.json: absolute, or relative
	// to the test's working directory ("." for the test package's own directory).
	Dir string
	// Prefix is Dir from the repository root, for the hint a notice gives
	// ("tests/interop").
	Prefix string
}

// Hint says how a person installs the suite's packages.
func (s Suite) Hint() string {
	return "install them with `npm ci --prefix " + s.Prefix + " --no-audit --no-fund` from the repository root (needs node and npm)"
}

// noticed holds the names of the suites whose skip notice this process has written.
var noticed sync.Map

// Unavailable skips t because something the suite needs is missing (msg says what), or
// fails it when $CI is set. go test hides the output of a package that passes, so a skip
// alone would show as a bare "ok": the first notice of each suite in a test binary also
// goes to stderr and to the controlling terminal, if there is one, where the person who ran
// go test sees it.
func (s Suite) Unavailable(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (CI is set: the %s tests must run, not skip)", msg, s.Name)
	}
	if _, told := noticed.LoadOrStore(s.Name, true); !told {
		notice := s.Name + ": SKIPPING the " + s.Name + " tests: " + msg + "\n"
		fmt.Fprint(os.Stderr, notice)
		if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
			fmt.Fprint(tty, notice)
			_ = tty.Close()
		}
	}
	t.Skip("SKIPPED: " + msg)
}

// File returns the absolute path of rel, a file of the installed packages given relative
// to the suite's node_modules (such as "typescript/bin/tsc"), installing the packages
// (Ensure) when it is missing.
func (s Suite) File(t testing.TB, rel string) string {
	t.Helper()
	marker := filepath.Join("node_modules", rel)
	if err := Ensure(s.Dir, marker); err != nil {
		s.Unavailable(t, rel+" is not installed in "+s.Prefix+"/node_modules and installing it failed: "+err.Error()+"; "+s.Hint())
	}
	abs, err := filepath.Abs(filepath.Join(s.Dir, marker))
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// Node returns the absolute path of the node in PATH.
func (s Suite) Node(t testing.TB) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		s.Unavailable(t, "node is not in PATH ("+err.Error()+"); the "+s.Name+" tests run their npm packages with it")
	}
	abs, err := filepath.Abs(node)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// Bin returns the absolute path of the bin script name of the installed package pkg, and
// the package's version, installing the packages when pkg is missing. The test fails when
// package.json does not pin pkg, when the installed version is not the pinned one, or when
// the package declares no such script.
func (s Suite) Bin(t testing.TB, pkg, name string) (entry, version string) {
	t.Helper()
	var pinned struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	readJSON(t, filepath.Join(s.Dir, "package.json"), &pinned)
	want := pinned.Dependencies[pkg]
	if want == "" {
		t.Fatalf("%s/package.json does not pin %s", s.Prefix, pkg)
	}
	manifest := s.File(t, pkg+"/package.json")
	var installed struct {
		Version string            `json:"version"`
		Bin     map[string]string `json:"bin"`
	}
	readJSON(t, manifest, &installed)
	if installed.Version != want {
		t.Fatalf("installed %s is %s but package.json pins %s; reinstall: %s", pkg, installed.Version, want, s.Hint())
	}
	script := installed.Bin[name]
	if script == "" {
		t.Fatalf("%s %s declares no %s bin: %v", pkg, installed.Version, name, installed.Bin)
	}
	entry = filepath.Join(filepath.Dir(manifest), script)
	if _, err := os.Stat(entry); err != nil {
		t.Fatalf("the bin script of %s: %v; reinstall: %s", pkg, err, s.Hint())
	}
	return entry, installed.Version
}

// readJSON decodes the JSON file path into v, failing t when it cannot.
func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
