package configdoc

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cordisgo/harness/host"
)

var update = flag.Bool("update", false, "rewrite docs/configuration.md")

// TestRenderConcurrent: Render keeps no state between calls, so calls at once (the race
// detector watching) render the same file. It runs first, before any other Render.
func TestRenderConcurrent(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var out [2][]byte
	var wg sync.WaitGroup
	for i := range out {
		wg.Go(func() {
			b, err := Render(root, host.Catalog())
			if err != nil {
				t.Error(err)
			}
			out[i] = b
		})
	}
	wg.Wait()
	if !bytes.Equal(out[0], out[1]) {
		t.Error("two Render calls at once rendered different files")
	}
}

// TestConfigurationDoc keeps docs/configuration.md equal to what the code generates, so the
// catalog cannot drift from the config types.
func TestConfigurationDoc(t *testing.T) {
	root, err := filepath.Abs("../..")
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
		t.Fatalf("%v (generate it with: go test ./host/configdoc -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("docs/configuration.md is out of date: run go test ./host/configdoc -update")
	}
}
