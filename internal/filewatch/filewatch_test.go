package filewatch_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/internal/filewatch"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestWatchReportsChanges: a write, a rename over the file and a file created in a
// directory made after the watch started are each reported.
func TestWatchReportsChanges(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "profile.yaml")
	changed := make(chan struct{}, 16)
	w := filewatch.New(path, filewatch.Options{Debounce: time.Millisecond, OnChange: func() { changed <- struct{}{} }})
	cx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = w.Run(cx) })
	defer func() { cancel(); wg.Wait() }()

	wait := func(what string) {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(time.Minute):
			t.Fatalf("%s: no change reported", what)
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil { // polled until it exists
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("a: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wait("created")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte("a: 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	wait("renamed over")
}

// TestCloseWithoutRun releases the watcher of a watch that never ran.
func TestCloseWithoutRun(t *testing.T) {
	w := filewatch.New(filepath.Join(t.TempDir(), "x.yaml"), filewatch.Options{OnChange: func() {}})
	w.Close()
}
