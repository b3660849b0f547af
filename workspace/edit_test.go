package workspace

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestEditFile(t *testing.T) {
	r := newRig(t, Options{}, map[string]string{
		"a.go":   "package a\n\nfunc A() int {\n\treturn 1\n}\n\nfunc B() int {\n\treturn 1\n}\n",
		"run.sh": "#!/bin/sh\necho hi\n",
	})
	if err := os.Chmod(filepath.Join(r.dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.fails("edit_file", map[string]any{"path": "a.go", "oldText": "return 1", "newText": "return 2"}, "occurs 2 times (lines 4, 8)")
	r.fails("edit_file", map[string]any{"path": "a.go", "oldText": "return 3", "newText": "x"}, "was not found")
	r.fails("edit_file", map[string]any{"path": "a.go", "oldText": "     4\treturn 1", "newText": "x"}, "line numbers as read_file shows them")
	r.fails("edit_file", map[string]any{"path": "a.go", "oldText": "func  A()  int", "newText": "x"}, "other white space")
	r.fails("edit_file", map[string]any{"path": "a.go", "oldText": "", "newText": "x"}, "oldText is empty")
	r.fails("edit_file", map[string]any{"path": "new.go", "oldText": "a", "newText": "b"}, "make it with write_file")

	got := r.ok("edit_file", map[string]any{"path": "a.go", "oldText": "func A() int {\n\treturn 1", "newText": "func A() int {\n\treturn 10"})
	want := "edited a.go: 1 replacement\n--- a/a.go\n+++ b/a.go\n@@ -1,7 +1,7 @@\n package a\n \n func A() int {\n-\treturn 1\n+\treturn 10\n }\n \n func B() int {\n"
	if got != want {
		t.Errorf("edit:\n%s\nwant:\n%s", got, want)
	}
	// Several edits, applied together: each matched in the file as it is.
	got = r.ok("edit_file", map[string]any{"path": "a.go", "edits": []map[string]any{
		{"oldText": "package a", "newText": "package b"},
		{"oldText": "return ", "newText": "return -", "all": true},
	}})
	contains(t, "edits", got, "3 replacements", "-package a\n+package b\n", "+\treturn -10\n", "+\treturn -1\n")
	if f := r.file("a.go"); f != "package b\n\nfunc A() int {\n\treturn -10\n}\n\nfunc B() int {\n\treturn -1\n}\n" {
		t.Errorf("a.go is now %q", f)
	}
	r.fails("edit_file", map[string]any{"path": "a.go", "edits": []map[string]any{
		{"oldText": "func A", "newText": "func X"}, {"oldText": "A() int", "newText": "Y() int"},
	}}, "edits 1 and 2 overlap")

	// A dry run shows the diff and changes nothing.
	before := r.file("run.sh")
	dry := r.result("edit_file", map[string]any{"path": "run.sh", "oldText": "hi", "newText": "hello", "dryRun": true})
	if dry.Meta[previewMetaKey] != "diff" {
		t.Errorf("dry run _meta %v", dry.Meta)
	}
	if r.file("run.sh") != before {
		t.Error("the dry run wrote")
	}
	r.ok("edit_file", map[string]any{"path": "run.sh", "oldText": "hi", "newText": "hello"})
	if fi, err := os.Stat(filepath.Join(r.dir, "run.sh")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("run.sh mode %v, %v: an edit must keep it", fi.Mode(), err)
	}
	if entries, _ := os.ReadDir(r.dir); len(entries) != 2 {
		t.Errorf("temporary files left: %v", entries)
	}
}

// TestStale: a file changed on disk since it was read cannot be edited or written until it
// is read again; the workspace's own writes count as reads.
func TestStale(t *testing.T) {
	r := newRig(t, Options{}, map[string]string{"f.txt": "one\n"})
	r.ok("read_file", map[string]any{"path": "f.txt"})
	r.ok("edit_file", map[string]any{"path": "f.txt", "oldText": "one", "newText": "two"})
	r.ok("edit_file", map[string]any{"path": "f.txt", "oldText": "two", "newText": "three"})
	write(t, r.dir, map[string]string{"f.txt": "someone else\n"})
	r.fails("edit_file", map[string]any{"path": "f.txt", "oldText": "someone", "newText": "x"}, "changed on disk since it was last read")
	r.fails("write_file", map[string]any{"path": "f.txt", "content": "x"}, "read it again")
	r.ok("read_file", map[string]any{"path": "f.txt"})
	r.ok("edit_file", map[string]any{"path": "f.txt", "oldText": "someone", "newText": "x"})
}

func TestWriteFile(t *testing.T) {
	r := newRig(t, Options{}, map[string]string{"old.txt": "a\nb\nc\n"})
	got := r.ok("write_file", map[string]any{"path": "new/dir/n.txt", "content": "hello\n"})
	if got != "created new/dir/n.txt (6 bytes)\n--- a/new/dir/n.txt\n+++ b/new/dir/n.txt\n@@ -0,0 +1 @@\n+hello\n" {
		t.Errorf("create: %q", got)
	}
	got = r.ok("write_file", map[string]any{"path": "old.txt", "content": "a\nB\nc"})
	contains(t, "replace", got, "replaced old.txt", " a\n-b\n-c\n+B\n+c\n\\ No newline at end of file\n")
	if r.file("old.txt") != "a\nB\nc" {
		t.Errorf("old.txt = %q", r.file("old.txt"))
	}
	contains(t, "same", r.ok("write_file", map[string]any{"path": "old.txt", "content": "a\nB\nc"}), "left unchanged")

	// A hard-linked file is refused: the write would separate it from its other names.
	write(t, r.dir, map[string]string{"linked.txt": "x"})
	if err := os.Link(filepath.Join(r.dir, "linked.txt"), filepath.Join(t.TempDir(), "other")); err != nil {
		t.Fatal(err)
	}
	r.fails("write_file", map[string]any{"path": "linked.txt", "content": "y"}, "several hard links")
	r.fails("edit_file", map[string]any{"path": "linked.txt", "oldText": "x", "newText": "y"}, "several hard links")
}

// TestUnifiedDiff checks the diffs made from edits against the edits themselves: the diff
// applied to the old text gives the new one, for random texts and edits.
func TestUnifiedDiff(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"a", "b", "c\n", "\n", "dd\n", "e e", "\n\n"}
	text := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(words[rng.IntN(len(words))])
		}
		return b.String()
	}
	for i := range 3000 {
		old := text(rng.IntN(60))
		var edits []textEdit
		for pos := 0; pos < len(old); {
			start := pos + rng.IntN(len(old)-pos+1)
			end := start + rng.IntN(min(8, len(old)-start)+1)
			edits = append(edits, textEdit{start, end, text(rng.IntN(4))})
			pos = end + 1 + rng.IntN(20)
		}
		var b strings.Builder
		last := 0
		for _, e := range edits {
			b.WriteString(old[last:e.start])
			b.WriteString(e.text)
			last = e.end
		}
		b.WriteString(old[last:])
		want := b.String()
		d := unifiedDiff("f", old, edits)
		if want == old {
			continue
		}
		got, err := applyUnified(d, old)
		if err != nil || got != want {
			t.Fatalf("case %d: old %q, edits %+v\ndiff:\n%s\napplied: %q, %v\nwant %q", i, old, edits, d, got, err, want)
		}
	}
}

// TestLargeFile reads and edits a 10 MB file and reports the memory the edit allocates; the
// read, a page at a time, must stay far below the file's size.
func TestLargeFile(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 10<<20; i++ {
		fmt.Fprintf(&b, "line %07d of a large file, with some text to make it wide enough\n", i)
	}
	big := b.String()
	r := newRig(t, Options{}, map[string]string{"big.txt": big})
	start := time.Now()
	read := measure(func() { r.ok("read_file", map[string]any{"path": "big.txt", "offset": 150000, "limit": 10}) })
	edit := measure(func() {
		r.ok("edit_file", map[string]any{"path": "big.txt", "oldText": "line 0150000 of", "newText": "LINE 150000 OF"})
	})
	t.Logf("10 MB file: read 10 lines at line 150000: %d KiB allocated; edit: %d KiB allocated (file %d KiB); %v",
		read>>10, edit>>10, len(big)>>10, time.Since(start))
	if read > 2<<20 {
		t.Errorf("a read of 10 lines allocated %d bytes", read)
	}
	if edit > 2*uint64(len(big)) {
		t.Errorf("an edit of a %d-byte file allocated %d bytes", len(big), edit)
	}
	if got := r.file("big.txt"); got != strings.Replace(big, "line 0150000 of", "LINE 150000 OF", 1) {
		t.Error("the edit went wrong")
	}
}

// applyUnified applies a unified diff to old, checking that every context and removed line
// is what old has there and that the hunks' counts agree with their lines.
func applyUnified(diff, old string) (string, error) {
	lines := strings.SplitAfter(old, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var out strings.Builder
	next := 0 // the next old line (0-based) not yet copied
	dl := strings.SplitAfter(diff, "\n")
	for i := 0; i < len(dl); i++ {
		l := dl[i]
		if strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ") || l == "" {
			continue
		}
		m := hunkHeader.FindStringSubmatch(l)
		if m == nil {
			return "", fmt.Errorf("bad hunk header %q", l)
		}
		num := func(s string, def int) int {
			if s == "" {
				return def
			}
			n, _ := strconv.Atoi(s)
			return n
		}
		os, oc, nc := num(m[1], 0), num(m[2], 1), num(m[4], 1)
		start := os - 1
		if oc == 0 {
			start = os
		}
		for ; next < start; next++ {
			out.WriteString(lines[next])
		}
		gotOld, gotNew := 0, 0
		for i+1 < len(dl) && len(dl[i+1]) > 0 && strings.ContainsRune(" -+", rune(dl[i+1][0])) && !strings.HasPrefix(dl[i+1], "--- ") {
			i++
			body := dl[i][1:]
			if i+1 < len(dl) && strings.HasPrefix(dl[i+1], "\\ No newline") {
				body = strings.TrimSuffix(body, "\n")
				i++
			}
			switch dl[i-boolInt(strings.HasPrefix(dl[i], "\\"))][0] {
			case ' ', '-':
				if next >= len(lines) || lines[next] != body {
					return "", fmt.Errorf("line %d is %q, the diff says %q", next+1, at(lines, next), body)
				}
				if dl[i-boolInt(strings.HasPrefix(dl[i], "\\"))][0] == ' ' {
					out.WriteString(body)
					gotNew++
				}
				next++
				gotOld++
			case '+':
				out.WriteString(body)
				gotNew++
			}
		}
		if gotOld != oc || gotNew != nc {
			return "", fmt.Errorf("hunk %q has %d old and %d new lines", l, gotOld, gotNew)
		}
	}
	for ; next < len(lines); next++ {
		out.WriteString(lines[next])
	}
	if out.Len() == 0 && old != "" && diff == "" {
		return "", errors.New("empty diff")
	}
	return out.String(), nil
}

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(end of file)"
}
