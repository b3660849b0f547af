package workspace

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func pngBytes(t *testing.T) string {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 4, 4))); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestTools(t *testing.T) {
	r := newRig(t, Options{}, nil)
	res, err := r.cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		a := tool.Annotations
		ro := slices.Contains([]string{"read_file", "list_dir", "glob", "grep", "shell_output"}, tool.Name)
		if a == nil || a.ReadOnlyHint != ro || a.DestructiveHint == nil || *a.DestructiveHint == ro {
			t.Errorf("%s: annotations %+v, want readOnly %v and destructive %v", tool.Name, a, ro, !ro)
		}
		dry := slices.Contains([]string{"edit_file", "write_file", "shell"}, tool.Name)
		if got := tool.Meta[DryRunMetaKey]; dry != (got == "dryRun") {
			t.Errorf("%s: _meta %v", tool.Name, tool.Meta)
		}
	}
	want := []string{"read_file", "list_dir", "glob", "grep", "edit_file", "write_file", "shell", "shell_output", "shell_kill"}
	slices.Sort(want)
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Errorf("tools %q, want %q", names, want)
	}

	ro := newRig(t, Options{Mode: ModeReadOnly}, nil)
	res, err = ro.cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name == "write_file" || tool.Name == "edit_file" {
			t.Errorf("read-only mode offers %s", tool.Name)
		}
	}
	if info := ro.cs.InitializeResult().ServerInfo; !strings.Contains(info.Description, "sandbox read-only") {
		t.Errorf("description %q does not name the mode", info.Description)
	}
}

func TestReadFile(t *testing.T) {
	var long strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&long, "line %d\n", i)
	}
	r := newRig(t, Options{}, map[string]string{
		"a.txt":     "one\ntwo\r\nthree",
		"long.txt":  long.String(),
		"wide.txt":  strings.Repeat("x", 5000) + "\nnext\n",
		"empty.txt": "",
		"bin.dat":   "ab\x00cd",
		"img.png":   pngBytes(t),
		"dir/":      "",
	})
	if got := r.ok("read_file", map[string]any{"path": "a.txt"}); got != "     1\tone\n     2\ttwo\n     3\tthree\n" {
		t.Errorf("a.txt: %q", got)
	}
	got := r.ok("read_file", map[string]any{"path": "long.txt"})
	contains(t, "default limit", got, "  2000\tline 2000\n", "[lines 1-2000 shown; the file goes on: continue with offset 2001]")
	got = r.ok("read_file", map[string]any{"path": "long.txt", "offset": 2499, "limit": 5})
	if got != "  2499\tline 2499\n  2500\tline 2500\n" {
		t.Errorf("the end: %q", got)
	}
	contains(t, "past the end", r.ok("read_file", map[string]any{"path": "long.txt", "offset": 3000}), "offset 3000 is past its end")
	contains(t, "long line", r.ok("read_file", map[string]any{"path": "wide.txt"}), "[…line cut: 3000 more bytes]\n     2\tnext\n")
	contains(t, "empty", r.ok("read_file", map[string]any{"path": "empty.txt"}), "an empty file")
	contains(t, "binary", r.ok("read_file", map[string]any{"path": "bin.dat"}), "a binary file", "not shown")
	r.fails("read_file", map[string]any{"path": "dir"}, "is a directory")
	r.fails("read_file", map[string]any{"path": "nope.txt"}, `"nope.txt" does not exist`)

	img := r.result("read_file", map[string]any{"path": "img.png"})
	if len(img.Content) != 2 {
		t.Fatalf("image: %d blocks", len(img.Content))
	}
	if ic, ok := img.Content[1].(*mcp.ImageContent); !ok || ic.MIMEType != "image/png" || string(ic.Data) != pngBytes(t) {
		t.Errorf("image block %#v", img.Content[1])
	}
}

func TestListAndGlob(t *testing.T) {
	r := newRig(t, Options{}, map[string]string{
		".gitignore":        "build/\n*.log\n",
		"main.go":           "package main\n",
		"pkg/a.go":          "package pkg\n",
		"pkg/a_test.go":     "package pkg\n",
		"pkg/sub/b.go":      "package sub\n",
		"pkg/.gitignore":    "gen.go\n",
		"pkg/gen.go":        "package pkg\n",
		"build/out.go":      "package out\n",
		"x.log":             "log\n",
		".git/HEAD":         "ref\n",
		".github/ci.yaml":   "on: push\n",
		"web/app.ts":        "x\n",
		"web/app.tsx":       "x\n",
		"web/sub/index.tsx": "x\n",
	})
	got := r.ok("list_dir", map[string]any{})
	contains(t, "list", got, ".git/\n", "build/  (ignored)\n", "main.go  13 B\n", "pkg/\n", "x.log")
	got = r.ok("list_dir", map[string]any{"path": ".", "depth": 2})
	contains(t, "depth 2", got, "pkg/\n  .gitignore  7 B\n  a.go", "  sub/\n")
	if strings.Contains(got, "HEAD") || strings.Contains(got, "out.go") {
		t.Errorf("depth 2 went into .git or an ignored directory:\n%s", got)
	}
	if got := r.ok("glob", map[string]any{"pattern": "**/*.go"}); got != "main.go\npkg/a.go\npkg/a_test.go\npkg/sub/b.go\n" {
		t.Errorf("glob **/*.go: %q", got)
	}
	if got := r.ok("glob", map[string]any{"pattern": "web/**/*.{ts,tsx}"}); got != "web/app.ts\nweb/app.tsx\nweb/sub/index.tsx\n" {
		t.Errorf("glob with braces: %q", got)
	}
	if got := r.ok("glob", map[string]any{"pattern": "*.go", "path": "pkg"}); got != "pkg/a.go\npkg/a_test.go\n" {
		t.Errorf("glob in pkg: %q", got)
	}
	contains(t, "hidden files", r.ok("glob", map[string]any{"pattern": "**/*.yaml"}), ".github/ci.yaml")
	contains(t, "no match", r.ok("glob", map[string]any{"pattern": "**/*.rs"}), "no files match")
	r.fails("glob", map[string]any{"pattern": "[oops"}, "not a valid glob")
}

func TestGrep(t *testing.T) {
	r := newRig(t, Options{}, map[string]string{
		".gitignore":   "vendor/\n",
		"a.go":         "package a\n\nfunc Alpha() error {\n\treturn nil\n}\n\nfunc beta() {}\n",
		"b.go":         "package a\n\n// TODO: more\nfunc Gamma() error { return nil }\n",
		"notes.md":     "# Notes\nfunc in prose\nTODO later\n",
		"vendor/v.go":  "func Vendored() error\n",
		"bin.o":        "func\x00binary",
		"crlf.txt":     "one\r\nfunc two\r\n",
		"dir/deep.go":  "package dir\nfunc Deep() error { return nil }\n",
		"dir/other.ts": "function f() {}\n",
	})
	want := "a.go:3:func Alpha() error {\nb.go:4:func Gamma() error { return nil }\ndir/deep.go:2:func Deep() error { return nil }\n"
	if got := r.ok("grep", map[string]any{"pattern": `func \w+\(\) error`}); got != want {
		t.Errorf("content:\n%s\nwant:\n%s", got, want)
	}
	if got := r.ok("grep", map[string]any{"pattern": "TODO", "output": "files"}); got != "b.go\nnotes.md\n" {
		t.Errorf("files: %q", got)
	}
	if got := r.ok("grep", map[string]any{"pattern": "^func", "output": "count"}); got != "a.go:2\nb.go:1\ncrlf.txt:1\ndir/deep.go:1\ndir/other.ts:1\nnotes.md:1\n" {
		t.Errorf("count: %q", got)
	}
	if got := r.ok("grep", map[string]any{"pattern": "func", "type": "ts"}); got != "dir/other.ts:1:function f() {}\n" {
		t.Errorf("type ts: %q", got)
	}
	if got := r.ok("grep", map[string]any{"pattern": "func", "glob": "*.md"}); got != "notes.md:2:func in prose\n" {
		t.Errorf("glob: %q", got)
	}
	if got := r.ok("grep", map[string]any{"pattern": "FUNC TWO", "ignoreCase": true}); got != "crlf.txt:2:func two\n" {
		t.Errorf("ignoreCase and CRLF: %q", got)
	}
	if got := r.ok("grep", map[string]any{"pattern": "return nil", "path": "a.go", "context": 1}); got != "a.go-3-func Alpha() error {\na.go:4:\treturn nil\na.go-5-}\n" {
		t.Errorf("context: %q", got)
	}
	got := r.ok("grep", map[string]any{"pattern": "func", "maxResults": 2})
	contains(t, "cap", got, "a.go:3:", "a.go:7:", "[results cut at 2")
	if strings.Contains(got, "b.go") {
		t.Errorf("cap: %q", got)
	}
	contains(t, "no match", r.ok("grep", map[string]any{"pattern": "zzz"}), "no matches")
	// Case-insensitive literals are found by an ASCII search first, and every match the
	// expression has is still found: letters in either case; k and s, which Unicode folds
	// to the Kelvin sign and the long s, through the expression alone.
	folded := newRig(t, Options{}, map[string]string{
		"h.txt": "Content-Length: 5\ncontent-length: 6\nCONTENT-LENGTH\ncontent_length\n",
		"k.txt": "\u212Aelvin scale\nkelvin\n\u017Fome\n",
	})
	if got := folded.ok("grep", map[string]any{"pattern": "content-LENGTH", "ignoreCase": true, "output": "count"}); got != "h.txt:3\n" {
		t.Errorf("ignoreCase literal: %q", got)
	}
	if got := folded.ok("grep", map[string]any{"pattern": "kelvin", "ignoreCase": true, "output": "count"}); got != "k.txt:2\n" {
		t.Errorf("ignoreCase with k: %q", got)
	}
	if got := folded.ok("grep", map[string]any{"pattern": "SOME", "ignoreCase": true}); got != "k.txt:3:\u017Fome\n" {
		t.Errorf("ignoreCase with s: %q", got)
	}
	if got := folded.ok("grep", map[string]any{"pattern": `length: \d`, "ignoreCase": true, "output": "count"}); got != "h.txt:2\n" {
		t.Errorf("ignoreCase literal in an expression: %q", got)
	}
	r.fails("grep", map[string]any{"pattern": "(unclosed"}, "missing closing )")
	r.fails("grep", map[string]any{"pattern": "x", "type": "tss"}, `did you mean "css" or "ts"?`)
}

// TestGrepPieces checks the search across the pieces a large file is read in: matches and
// their context on both sides of a piece's end, and line numbers after it.
func TestGrepPieces(t *testing.T) {
	var b strings.Builder
	n := 0
	for b.Len() < 3*grepChunk {
		n++
		if n%5000 == 0 {
			fmt.Fprintf(&b, "MATCH %d\n", n)
		} else {
			fmt.Fprintf(&b, "filler line %d\n", n)
		}
	}
	r := newRig(t, Options{}, map[string]string{"big.txt": b.String()})
	var want strings.Builder
	for m := 5000; m <= n; m += 5000 {
		if m > 5000 {
			want.WriteString("--\n")
		}
		fmt.Fprintf(&want, "big.txt-%d-filler line %d\nbig.txt-%d-filler line %d\nbig.txt:%d:MATCH %d\n", m-2, m-2, m-1, m-1, m, m)
		if m+1 <= n {
			fmt.Fprintf(&want, "big.txt-%d-filler line %d\n", m+1, m+1)
		}
		if m+2 <= n {
			fmt.Fprintf(&want, "big.txt-%d-filler line %d\n", m+2, m+2)
		}
	}
	// The same by an expression, by a literal and by a case-folded literal.
	for _, args := range []map[string]any{
		{"pattern": `MATCH \d+$`}, {"pattern": "MATCH"}, {"pattern": "match", "ignoreCase": true},
	} {
		args["context"] = 2
		if got := r.ok("grep", args); got != want.String() {
			t.Errorf("%v: got:\n%s\nwant:\n%s", args, got, want.String())
		}
	}
}
