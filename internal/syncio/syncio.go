// Package syncio makes a writer safe for concurrent use: the harness's stderr, written by
// the logger, the progress lines and the messages from several goroutines, and the
// combined output of a test's subprocess.
//
// # Concurrency
//
// A [Writer] is safe for concurrent use; each Write reaches the writer under it whole.
package syncio

import (
	"io"
	"sync"
)

// Writer passes each Write to W whole, one at a time. Set W before the first Write.
type Writer struct {
	mu sync.Mutex
	W  io.Writer
}

func (l *Writer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.W.Write(p)
}
