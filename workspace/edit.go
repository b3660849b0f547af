package workspace

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/internal/words"
)

// ErrStale is an edit or a write of a file that changed on disk since it was last read
// through the workspace: the caller's idea of its content is out of date.
var ErrStale = errors.New("changed on disk since it was last read")

type writeInput struct {
	Path    string `json:"path" jsonschema:"the file, relative to the workspace root; missing directories are made"`
	Content string `json:"content" jsonschema:"the whole new content of the file"`
	DryRun  bool   `json:"dryRun,omitempty" jsonschema:"only return the diff of what would be written"`
}

type editInput struct {
	Path    string     `json:"path" jsonschema:"the file to edit, relative to the workspace root"`
	OldText string     `json:"oldText,omitempty" jsonschema:"the exact text to replace (with edits: leave out)"`
	NewText string     `json:"newText,omitempty" jsonschema:"what replaces it"`
	All     bool       `json:"all,omitempty" jsonschema:"replace every occurrence of oldText, not just the only one"`
	Edits   []editSpec `json:"edits,omitempty" jsonschema:"several replacements applied together, each matched in the file as it is now; they must not overlap"`
	DryRun  bool       `json:"dryRun,omitempty" jsonschema:"only return the diff of what the edit would change"`
}

type editSpec struct {
	OldText string `json:"oldText" jsonschema:"the exact text to replace"`
	NewText string `json:"newText" jsonschema:"what replaces it"`
	All     bool   `json:"all,omitempty" jsonschema:"replace every occurrence, not just the only one"`
}

// writeFile is write_file.
func (s *Server) writeFile(_ context.Context, _ *mcp.CallToolRequest, in writeInput) (*mcp.CallToolResult, any, error) {
	f, err := s.current(in.Path)
	if err != nil {
		return nil, nil, err
	}
	diff := wholeFileDiff(f.rel, f.content, in.Content)
	what := "replace"
	switch {
	case !f.exists:
		what = "create"
		diff = wholeFileDiff(f.rel, "", in.Content)
	case diff == "":
		what = "leave unchanged"
	}
	if in.DryRun {
		return preview(fmt.Sprintf("write_file would %s %s (%d bytes)\n%s", what, f.rel, len(in.Content), diff), "diff"), nil, nil
	}
	if !f.exists {
		if err := s.root.r.MkdirAll(path.Dir(f.rel), 0o755); err != nil {
			return nil, nil, fileError(in.Path, err)
		}
	}
	if err := s.replace(f.rel, f.mode, func(w io.StringWriter) error {
		_, err := w.WriteString(in.Content)
		return err
	}); err != nil {
		return nil, nil, fileError(in.Path, err)
	}
	past := map[string]string{"create": "created", "replace": "replaced", "leave unchanged": "left unchanged"}[what]
	return text(fmt.Sprintf("%s %s (%d bytes)\n%s", past, f.rel, len(in.Content), diff)), nil, nil
}

// editFile is edit_file.
func (s *Server) editFile(_ context.Context, _ *mcp.CallToolRequest, in editInput) (*mcp.CallToolResult, any, error) {
	specs := in.Edits
	switch {
	case len(specs) > 0 && (in.OldText != "" || in.NewText != ""):
		return nil, nil, errors.New("give either oldText and newText, or edits, not both")
	case len(specs) == 0:
		specs = []editSpec{{OldText: in.OldText, NewText: in.NewText, All: in.All}}
	}
	f, err := s.current(in.Path)
	if err != nil {
		return nil, nil, err
	}
	if !f.exists {
		return nil, nil, fmt.Errorf("%q does not exist: make it with write_file", in.Path)
	}
	edits, err := planEdits(f.content, specs)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", f.rel, err)
	}
	diff := unifiedDiff(f.rel, f.content, edits)
	n := len(edits)
	if in.DryRun {
		return preview(fmt.Sprintf("edit_file would make %d replacement%s in %s\n%s", n, words.Plural(n), f.rel, diff), "diff"), nil, nil
	}
	if err := s.replace(f.rel, f.mode, func(w io.StringWriter) error {
		last := 0
		for _, e := range edits {
			if _, err := w.WriteString(f.content[last:e.start]); err != nil {
				return err
			}
			if _, err := w.WriteString(e.text); err != nil {
				return err
			}
			last = e.end
		}
		_, err := w.WriteString(f.content[last:])
		return err
	}); err != nil {
		return nil, nil, fileError(in.Path, err)
	}
	return text(fmt.Sprintf("edited %s: %d replacement%s\n%s", f.rel, n, words.Plural(n), diff)), nil, nil
}

// preview is a dry run's result: the text, and in _meta what kind of preview it is ("diff"
// or "command") for an approval to show it as such.
func preview(s, kind string) *mcp.CallToolResult {
	r := text(s)
	r.Meta = mcp.Meta{previewMetaKey: kind}
	return r
}

// target is a file a write tool is about to change, as current found it.
type target struct {
	rel     string      // its path below the root
	content string      // "" when it does not exist
	mode    fs.FileMode // what the new file gets
	exists  bool
}

// current resolves the path a write tool was asked for below the root and reads the file
// there. It refuses what the write tools must not touch: a path outside the root, a
// directory, a special file, a file with several hard links, a file larger than the edit
// limit, and a file that changed since it was last read.
func (s *Server) current(asked string) (target, error) {
	rel, err := s.root.rel(asked)
	if err != nil {
		return target{}, err
	}
	fi, err := s.root.r.Stat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return target{rel: rel, mode: 0o644}, nil
	case err != nil:
		return target{}, fileError(asked, err)
	case fi.IsDir():
		return target{}, fmt.Errorf("%q is a directory", asked)
	case !fi.Mode().IsRegular():
		return target{}, fmt.Errorf("%q is not a regular file (%s)", asked, fi.Mode().Type())
	case hardLinked(fi):
		return target{}, &PathError{Path: asked, Err: ErrHardLink, Detail: "edit it with the shell if the change should reach every name"}
	case fi.Size() > hashLimit:
		return target{}, fmt.Errorf("%q is %s, more than the %s the write tools handle: use the shell", asked, byteSize(fi.Size()), byteSize(hashLimit))
	}
	f, err := s.root.r.Open(rel)
	if err != nil {
		return target{}, fileError(asked, err)
	}
	defer func() { _ = f.Close() }()
	var b strings.Builder
	b.Grow(int(fi.Size()))
	h := sha256.New()
	if _, err := io.Copy(&b, io.TeeReader(f, h)); err != nil {
		return target{}, fileError(asked, err)
	}
	now := snapshot{size: int64(b.Len()), hashed: true}
	h.Sum(now.sum[:0])
	if rec, ok := s.reads.get(rel); ok && !rec.same(now) {
		return target{}, &PathError{Path: asked, Err: ErrStale, Detail: "read it again before changing it"}
	}
	return target{rel: rel, content: b.String(), mode: fi.Mode().Perm(), exists: true}, nil
}

// replace writes the file rel anew through write, atomically: a temporary file in the same
// directory, made through the root, synced and renamed over rel, with mode perm. A failed
// write leaves the old file as it was. Once written, the file counts as read: what a later
// edit expects is what was written.
func (s *Server) replace(rel string, perm fs.FileMode, write func(io.StringWriter) error) error {
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	tmp := path.Join(path.Dir(rel), "."+path.Base(rel)+".harness-"+hex.EncodeToString(suffix[:]))
	f, err := s.root.r.OpenFile(tmp, osCreateExcl, perm)
	if err != nil {
		return err
	}
	// Written through a buffer into the file and the hash at once: the text is never
	// copied whole.
	t := &hashingWriter{w: f, h: sha256.New()}
	bw := bufio.NewWriterSize(t, 64<<10)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// The mode asked for at creation went through the umask; set it as it was.
		err = s.root.r.Chmod(tmp, perm)
	}
	if err == nil {
		err = s.root.r.Rename(tmp, rel)
	}
	if err != nil {
		_ = s.root.r.Remove(tmp)
		return err
	}
	snap := snapshot{size: t.n, hashed: true}
	t.h.Sum(snap.sum[:0])
	s.reads.put(rel, snap)
	return nil
}

// hashingWriter writes to w and hashes what it writes.
type hashingWriter struct {
	w io.Writer
	h hash.Hash
	n int64
}

func (t *hashingWriter) Write(p []byte) (int, error) {
	t.h.Write(p)
	n, err := t.w.Write(p)
	t.n += int64(n)
	return n, err
}

// lineNumbers matches read_file's line numbers at the start of a line.
var lineNumbers = regexp.MustCompile(`(?m)^ *\d+\t`)

// planEdits finds each spec's text in content (the file as it is) and returns the
// replacements, sorted; a text found nowhere, found several times without all, or
// overlapping another edit's is refused with what would help.
func planEdits(content string, specs []editSpec) ([]textEdit, error) {
	var edits []textEdit
	owner := map[int]int{} // edit start → spec index, for overlap messages
	for i, sp := range specs {
		which := ""
		if len(specs) > 1 {
			which = fmt.Sprintf("edit %d: ", i+1)
		}
		switch sp.OldText {
		case "":
			return nil, fmt.Errorf("%soldText is empty: give the exact text to replace (write_file replaces a whole file)", which)
		case sp.NewText:
			return nil, fmt.Errorf("%soldText and newText are the same: nothing would change", which)
		}
		starts := occurrences(content, sp.OldText)
		switch {
		case len(starts) == 0:
			return nil, fmt.Errorf("%soldText was not found: %s", which, notFoundHint(content, sp.OldText))
		case len(starts) > 1 && !sp.All:
			return nil, fmt.Errorf("%soldText occurs %d times (lines %s): add surrounding lines to make it unique, or set all to replace every one",
				which, len(starts), lineList(content, starts))
		}
		for _, st := range starts {
			edits = append(edits, textEdit{start: st, end: st + len(sp.OldText), text: sp.NewText})
			owner[st] = i
		}
	}
	slices.SortStableFunc(edits, func(a, b textEdit) int { return a.start - b.start })
	for k := 1; k < len(edits); k++ {
		if edits[k].start < edits[k-1].end {
			return nil, fmt.Errorf("edits %d and %d overlap (line %s): combine them into one", owner[edits[k-1].start]+1, owner[edits[k].start]+1,
				lineList(content, []int{edits[k].start}))
		}
	}
	return edits, nil
}

// occurrences returns the offsets of the non-overlapping occurrences of s in content.
func occurrences(content, s string) []int {
	var out []int
	for off := 0; ; {
		i := strings.Index(content[off:], s)
		if i < 0 {
			return out
		}
		out = append(out, off+i)
		off += i + len(s)
	}
}

// lineList names the lines of the offsets, "3, 17 and 40" (at most ten).
func lineList(content string, offs []int) string {
	var names []string
	line, at := 1, 0
	for i, o := range offs {
		if i == 10 {
			names = append(names, "…")
			break
		}
		line += strings.Count(content[at:o], "\n")
		at = o
		names = append(names, fmt.Sprint(line))
	}
	return strings.Join(names, ", ")
}

// notFoundHint says what may be wrong with a text that is not in content.
func notFoundHint(content, old string) string {
	if lineNumbers.MatchString(old) && !lineNumbers.MatchString(content) {
		return "it starts its lines with line numbers as read_file shows them; they are not part of the file"
	}
	if norm := strings.Join(strings.Fields(old), " "); norm != "" {
		fields := strings.Fields(content)
		if strings.Contains(strings.Join(fields, " "), norm) {
			return "the text is there with other white space (indentation, tabs or line breaks): copy it exactly from read_file's output"
		}
	}
	if strings.Contains(strings.ToLower(content), strings.ToLower(old)) {
		return "the text is there in other letter case"
	}
	return "read the file again and copy the text exactly"
}
