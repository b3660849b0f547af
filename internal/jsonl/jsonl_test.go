package jsonl_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cordisgo/harness/internal/jsonl"
)

type entry struct {
	N    int    `json:"n"`
	Text string `json:"text,omitempty"`
}

// What is appended reads back in order, a torn last line left out and the size at the
// end of the last whole line; Cut drops the torn tail, so the next append starts a line.
func TestAppendReadCut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	f, err := jsonl.Open[entry](path, os.O_CREATE|os.O_EXCL, jsonl.Options{Sync: true,
		Scrub: func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("secret"), []byte("***")) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Append(entry{N: 1}, entry{N: 2, Text: "a secret"}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Append(entry{N: 3}); !errors.Is(err, jsonl.ErrClosed) {
		t.Errorf("append after close: %v, want ErrClosed", err)
	}
	if _, err := jsonl.Open[entry](path, os.O_CREATE|os.O_EXCL, jsonl.Options{}); !errors.Is(err, os.ErrExist) {
		t.Errorf("a new file over an existing one: %v", err)
	}
	whole, _ := os.ReadFile(path)
	appendRaw(t, path, `{"n":3,"te`) // the process died here

	var got []entry
	size, err := jsonl.ReadFile(path, func(e entry) { got = append(got, e) }, nil)
	if err != nil || size != int64(len(whole)) || fmt.Sprint(got) != "[{1 } {2 a ***}]" {
		t.Fatalf("read %v, size %d (want %d), %v", got, size, len(whole), err)
	}
	f, err = jsonl.Open[entry](path, 0, jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Cut(size); err != nil {
		t.Fatal(err)
	}
	if err := f.Append(entry{N: 4}); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	got = nil
	if _, err := jsonl.ReadFile(path, func(e entry) { got = append(got, e) }, nil); err != nil || fmt.Sprint(got) != "[{1 } {2 a ***} {4 }]" {
		t.Fatalf("after the cut: %v, %v", got, err)
	}
}

// A line that is not a value goes to bad with its number and whether it is the last line;
// bad's error stops the read, nil skips the line.
func TestReadBadLines(t *testing.T) {
	in := "{\"n\":1}\nnot json\n{\"n\":3}\n{\"n\":\n"
	type call struct {
		line int
		last bool
	}
	var calls []call
	var got []entry
	size, err := jsonl.Read(strings.NewReader(in), func(e entry) { got = append(got, e) }, func(line int, last bool, err error) error {
		calls = append(calls, call{line, last})
		return nil
	})
	if err != nil || fmt.Sprint(got) != "[{1 } {3 }]" || fmt.Sprint(calls) != "[{2 false} {4 true}]" || size != int64(len("{\"n\":1}\nnot json\n{\"n\":3}\n")) {
		t.Fatalf("got %v, bad lines %v, size %d, %v", got, calls, size, err)
	}
	stop := errors.New("stop")
	got = nil
	size, err = jsonl.Read(strings.NewReader(in), func(e entry) { got = append(got, e) }, func(int, bool, error) error { return stop })
	if !errors.Is(err, stop) || fmt.Sprint(got) != "[{1 }]" || size != int64(len("{\"n\":1}\n")) {
		t.Fatalf("stopped: got %v, size %d, %v", got, size, err)
	}
}

// With StopAtError every append after a failed write fails with that write's error,
// without writing; without it each append writes again (and fails again on /dev/full, with
// an error of its own). A value that is not JSON fails before any write and stops nothing.
func TestStopAtError(t *testing.T) {
	for _, stop := range []bool{true, false} {
		f, err := jsonl.Open[any]("/dev/full", 0, jsonl.Options{StopAtError: stop})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Append(func() {}); err == nil || errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("stop %v: a func appended: %v", stop, err)
		}
		first := f.Append(1)
		if !errors.Is(first, syscall.ENOSPC) {
			t.Fatalf("stop %v: a write to /dev/full: %v", stop, first)
		}
		second := f.Append(2)
		if !errors.Is(second, syscall.ENOSPC) || errors.Is(second, first) != stop {
			t.Errorf("stop %v: the second append failed with %p %v, the first with %p", stop, second, second, first)
		}
		_ = f.Close()
	}
}

func appendRaw(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
}
