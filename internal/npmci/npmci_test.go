package npmci_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cordisgo/harness/internal/npmci"
)

// An installed directory (its marker exists) is left alone: npm is not run.
func ExampleEnsure() {
	dir, _ := os.MkdirTemp("", "npmci")
	defer func() { _ = os.RemoveAll(dir) }()
	marker := filepath.Join("node_modules", "pkg", "package.json")
	_ = os.MkdirAll(filepath.Join(dir, filepath.Dir(marker)), 0o700)
	_ = os.WriteFile(filepath.Join(dir, marker), []byte("{}"), 0o600)
	fmt.Println(npmci.Ensure(dir, marker))
	// Output: <nil>
}

// writeFile writes content to dir/rel, making the directories it needs.
func writeFile(t *testing.T, dir, rel, content string) {
	t.Helper()
	path := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestSuiteBin: an installed package of the pinned version gives the absolute path of its
// bin script and its version, without npm being run.
func TestSuiteBin(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "package.json", `{"dependencies": {"@scope/pkg": "1.2.3"}}`)
	writeFile(t, dir, "node_modules/@scope/pkg/package.json", `{"version": "1.2.3", "bin": {"pkg": "dist/cli.js"}}`)
	writeFile(t, dir, "node_modules/@scope/pkg/dist/cli.js", "")
	s := npmci.Suite{Name: "test", Dir: dir, Prefix: "x"}
	entry, version := s.Bin(t, "@scope/pkg", "pkg")
	if want := filepath.Join(dir, "node_modules/@scope/pkg/dist/cli.js"); entry != want || version != "1.2.3" {
		t.Fatalf("Bin = %q, %q; want %q, 1.2.3", entry, version, want)
	}
	if got := s.File(t, "@scope/pkg/dist/cli.js"); got != entry {
		t.Fatalf("File = %q, want %q", got, entry)
	}
}
