package configdoc

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/cordisgo/harness/host"
)

var update = flag.Bool("update", false, "rewrite docs/configuration.md")

// TestConfigurationDoc keeps docs/configuration.md equal to what the code generates, so the
// catalog cannot drift from the config types.
func TestConfigurationDoc(t *testing.T) {
	root, err := filepath.Abs("../../../..")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Render(root, host.Catalog())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "docs", "configuration.md")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (generate it with: go test ./cmd/harness/internal/configdoc -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("docs/configuration.md is out of date: run go test ./cmd/harness/internal/configdoc -update")
	}
}
