package npmci_test

import (
	"fmt"
	"os"
	"path/filepath"

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
