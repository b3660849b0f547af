package transport

import (
	"bytes"
	"sync"
	"unicode/utf8"
)

// defaultStderrTailBytes is how much of a stdio server's stderr is kept
// for errors and status.
const defaultStderrTailBytes = 8 << 10

// TailBuffer is an io.Writer that keeps the last max bytes written to it.
// Writes never fail and never block on a reader; memory is bounded by max.
// All methods are safe for concurrent use.
type TailBuffer struct {
	mu      sync.Mutex
	buf     []byte // ring storage, len(buf) == max once allocated
	start   int    // index of the oldest byte
	n       int    // bytes held
	dropped bool   // whether older bytes were discarded
	max     int
}

// NewTailBuffer returns a buffer keeping the last max bytes
// (defaultStderrTailBytes when max <= 0).
func NewTailBuffer(max int) *TailBuffer {
	if max <= 0 {
		max = defaultStderrTailBytes
	}
	return &TailBuffer{max: max}
}

// Write appends p, discarding the oldest bytes beyond the capacity. It
// always reports len(p), nil.
func (b *TailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	written := len(p)
	if b.buf == nil {
		b.buf = make([]byte, b.max)
	}
	if len(p) >= b.max {
		b.dropped = b.dropped || b.n > 0 || len(p) > b.max
		copy(b.buf, p[len(p)-b.max:])
		b.start, b.n = 0, b.max
		return written, nil
	}
	if overflow := b.n + len(p) - b.max; overflow > 0 {
		b.start = (b.start + overflow) % b.max
		b.n -= overflow
		b.dropped = true
	}
	end := (b.start + b.n) % b.max
	k := copy(b.buf[end:], p)
	copy(b.buf, p[k:])
	b.n += len(p)
	return written, nil
}

// bytes returns a copy of the held bytes in order and whether older
// bytes were discarded.
func (b *TailBuffer) bytes() ([]byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]byte, 0, b.n)
	if b.n == 0 {
		return out, b.dropped
	}
	end := b.start + b.n
	if end <= b.max {
		out = append(out, b.buf[b.start:end]...)
	} else {
		out = append(out, b.buf[b.start:]...)
		out = append(out, b.buf[:end-b.max]...)
	}
	return out, b.dropped
}

// Tail returns the held text. When older output was discarded, it starts
// after the first newline so the first line is not a fragment (unless the
// only newline ends the text), and never starts inside a UTF-8 sequence.
func (b *TailBuffer) Tail() string {
	data, dropped := b.bytes()
	if dropped {
		if i := bytes.IndexByte(data, '\n'); i >= 0 && i+1 < len(data) {
			data = data[i+1:]
		}
		for len(data) > 0 && !utf8.RuneStart(data[0]) {
			data = data[1:]
		}
	}
	return string(data)
}
