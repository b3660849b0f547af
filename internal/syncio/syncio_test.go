package syncio_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/cordisgo/harness/internal/syncio"
)

// Writes from many goroutines reach the buffer whole: every line is one write's.
func TestWriter(t *testing.T) {
	var buf bytes.Buffer
	w := &syncio.Writer{W: &buf}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				_, _ = w.Write([]byte("abcdefgh\n"))
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	for _, l := range lines {
		if l != "abcdefgh" {
			t.Fatalf("a torn write: %q", l)
		}
	}
	if len(lines) != 800 {
		t.Fatalf("%d lines, want 800", len(lines))
	}
}
