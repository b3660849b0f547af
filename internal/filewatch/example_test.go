package filewatch_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/cordisgo/harness/internal/filewatch"
)

// A file watched before it is written: the write is reported once it has settled.
func Example() {
	dir, err := os.MkdirTemp("", "filewatch")
	if err != nil {
		panic(err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	path := filepath.Join(dir, "profile.yaml")

	changed := make(chan struct{}, 1)
	w := filewatch.New(path, filewatch.Options{Debounce: 10 * time.Millisecond, OnChange: func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}})
	cx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = w.Run(cx) })

	if err := os.WriteFile(path, []byte("plugins: {}\n"), 0o600); err != nil {
		panic(err)
	}
	<-changed
	fmt.Println("profile.yaml changed")
	cancel()
	wg.Wait()
	// Output: profile.yaml changed
}
