// Package syncio makes a writer safe for concurrent use: the harness's stderr, written by
// the logger, the progress lines and the messages from several goroutines, the combined
// output of a test's subprocess ([Writer]), and a buffer read while it is written ([Buffer]).
//
// # Concurrency
//
// A [Writer] and a [Buffer] are safe for concurrent use; each Write reaches the writer under
// it whole.
package syncio

import (
	"bytes"
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

// Buffer is a bytes.Buffer that writers and readers may use concurrently (what a server's
// concurrent log writes leave, read while they go on).
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
