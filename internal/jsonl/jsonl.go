// Package jsonl is the one append-only JSON Lines file: values appended as whole lines, in
// one write per append, so that a crash tears at most the last line, and read back with
// such a torn tail left out. An agent session's event log and a gateway's audit file are
// kept this way.
package jsonl

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"sync"
)

// ErrClosed is the error of an append to a closed [File].
var ErrClosed = errors.New("jsonl: the file is closed")

// Options say how a [File] appends. The zero value writes each append as it comes, leaves
// its durability to the system, and lets an append be retried after one that failed.
type Options struct {
	// Sync makes each append durable (fsync) before it returns.
	Sync bool
	// Scrub, when set, is applied to each line (without its newline) before it is written:
	// a secret scrubber.
	Scrub func([]byte) []byte
	// StopAtError fails every append after one that failed, with its error: the file then
	// stays a prefix of what was appended, as a log replayed in order must be.
	StopAtError bool
}

// File appends values of T to one JSON Lines file, opened for appending (write-only). It
// is safe for concurrent use; several processes may append to one file, since each append
// is one write of whole lines.
type File[T any] struct {
	path string
	opts Options

	mu  sync.Mutex
	f   *os.File
	err error // with StopAtError: the first append's error
}

// Open opens path for appending, with flag's further bits (os.O_CREATE, os.O_EXCL); a file
// it creates has mode 0600.
func Open[T any](path string, flag int, opts Options) (*File[T], error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|flag, 0o600)
	if err != nil {
		return nil, err
	}
	return &File[T]{path: path, opts: opts, f: f}, nil
}

// Path returns the file's path.
func (l *File[T]) Path() string { return l.path }

// Cut drops the file's content past size bytes, when it is longer: the torn tail that
// [Read] left out, so that the next line does not follow it.
func (l *File[T]) Cut(size int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return ErrClosed
	}
	st, err := l.f.Stat()
	if err != nil || st.Size() <= size {
		return err
	}
	return l.f.Truncate(size)
}

// Append writes values as lines, in one write (and, with Options.Sync, an fsync).
func (l *File[T]) Append(values ...T) error {
	var buf []byte
	for _, v := range values {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if l.opts.Scrub != nil {
			b = l.opts.Scrub(b)
		}
		buf = append(append(buf, b...), '\n')
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.err != nil:
		return l.err
	case l.f == nil:
		return ErrClosed
	}
	_, err := l.f.Write(buf)
	if err == nil && l.opts.Sync {
		err = l.f.Sync()
	}
	if err != nil && l.opts.StopAtError {
		l.err = err
	}
	return err
}

// Close closes the file; it is idempotent.
func (l *File[T]) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// Read decodes the lines of r into values of T, in order, and calls each with one. A last
// line without its newline (an append cut short by a crash) is left out. A line that is not
// a T goes to bad, with its number (from 1) and whether it is the last line: Read skips it
// when bad returns nil, and stops with bad's error otherwise; nil bad skips every such
// line. Read returns the length of r up to the end of the last line it decoded (what to
// [File.Cut] the file to).
func Read[T any](r io.Reader, each func(T), bad func(line int, last bool, err error) error) (int64, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var read, size int64
	for n := 1; ; n++ {
		b, err := br.ReadBytes('\n')
		if err == io.EOF {
			return size, nil // what is left, if anything, is torn
		}
		if err != nil {
			return size, err
		}
		read += int64(len(b))
		var v T
		if err := json.Unmarshal(b, &v); err != nil {
			if bad == nil {
				continue
			}
			_, end := br.Peek(1)
			if err := bad(n, end == io.EOF, err); err != nil {
				return size, err
			}
			continue
		}
		each(v)
		size = read
	}
}

// ReadFile is [Read] of the file at path.
func ReadFile[T any](path string, each func(T), bad func(line int, last bool, err error) error) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }() // read only
	return Read(f, each, bad)
}
