package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/workspace/gitignore"
)

// Limits of list_dir.
const (
	maxListDepth   = 5
	maxListEntries = 1000
)

type listInput struct {
	Path  string `json:"path,omitempty" jsonschema:"the directory, relative to the workspace root (default: the root)"`
	Depth int    `json:"depth,omitempty" jsonschema:"how many levels to list (default 1, at most 5); deeper levels skip what .gitignore ignores"`
}

// listDir is list_dir.
func (s *Server) listDir(_ context.Context, _ *mcp.CallToolRequest, in listInput) (*mcp.CallToolResult, any, error) {
	rel, err := s.root.rel(in.Path)
	if err != nil {
		return nil, nil, err
	}
	depth := in.Depth
	switch {
	case depth == 0:
		depth = 1
	case depth < 0 || depth > maxListDepth:
		return nil, nil, fmt.Errorf("depth %d: expected 1 to %d", depth, maxListDepth)
	}
	fi, err := s.root.r.Stat(rel)
	if err != nil {
		return nil, nil, fileError(in.Path, err)
	}
	if !fi.IsDir() {
		return nil, nil, fmt.Errorf("%q is not a directory: read it with read_file", in.Path)
	}
	l := &lister{s: s, max: maxListEntries}
	stack := s.ignoreStack(rel)
	if err := l.list(rel, stack, depth, ""); err != nil && !errors.Is(err, errEnough) {
		return nil, nil, fileError(in.Path, err)
	}
	if l.n == 0 {
		return text(rel + ": an empty directory"), nil, nil
	}
	if l.cut {
		fmt.Fprintf(&l.b, "[listing cut at %d entries: list a subdirectory, or use glob]\n", l.max)
	}
	return text(l.b.String()), nil, nil
}

var errEnough = errors.New("enough entries")

type lister struct {
	s   *Server
	b   strings.Builder
	n   int
	max int
	cut bool
}

// list writes the entries of dir (relative to the root), indented, descending depth-1 more
// levels into directories that are neither ignored nor .git.
func (l *lister) list(dir string, stack gitignore.Stack, depth int, indent string) error {
	entries, err := fs.ReadDir(l.s.root.r.FS(), dir)
	if err != nil {
		return err
	}
	stack = stack.Push(l.s.loadIgnore(dir))
	for _, e := range entries {
		if l.n >= l.max {
			l.cut = true
			return errEnough
		}
		l.n++
		rel := path.Join(dir, e.Name())
		name := e.Name()
		ignored := stack.Ignored(rel, e.IsDir())
		switch t := e.Type(); {
		case t&fs.ModeSymlink != 0:
			target, _ := l.s.root.r.Readlink(rel)
			fmt.Fprintf(&l.b, "%s%s@ -> %s\n", indent, name, target)
			continue
		case e.IsDir():
			note := ""
			if ignored {
				note = "  (ignored)"
			}
			fmt.Fprintf(&l.b, "%s%s/%s\n", indent, name, note)
			if depth > 1 && !ignored && name != ".git" {
				if err := l.list(rel, stack, depth-1, indent+"  "); err != nil {
					return err
				}
			}
		default:
			size := ""
			if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
				size = "  " + byteSize(fi.Size())
			}
			fmt.Fprintf(&l.b, "%s%s%s\n", indent, name, size)
		}
	}
	return nil
}

// byteSize words a size for people.
func byteSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

// loadIgnore reads the .gitignore of dir (relative to the root), if any.
func (s *Server) loadIgnore(dir string) *gitignore.File {
	b, err := s.root.r.ReadFile(path.Join(dir, ".gitignore"))
	if err != nil {
		return nil
	}
	return gitignore.Parse(dir, b)
}

// ignoreStack returns the ignore files that apply inside dir (relative to the root): the
// repository's exclude file and the .gitignore of every directory above dir (dir's own is
// pushed by whoever lists it).
func (s *Server) ignoreStack(dir string) gitignore.Stack {
	var stack gitignore.Stack
	if b, err := s.root.r.ReadFile(".git/info/exclude"); err == nil {
		stack = stack.Push(gitignore.Parse("", b))
	}
	if dir == "." {
		return stack
	}
	parts := strings.Split(dir, "/")
	for i := range parts {
		stack = stack.Push(s.loadIgnore(strings.Join(parts[:i], "/")))
	}
	return stack
}
