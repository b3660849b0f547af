package workspace

import (
	"context"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/cordisgo/harness/workspace/gitignore"
)

// dirHandle is a directory of a walk, opened as an [os.Root] below the workspace's: its
// files are opened with one openat each, and nothing opened through it can leave it. It is
// closed when the walk and every file handed out from it are done with it.
type dirHandle struct {
	r    *os.Root
	refs atomic.Int32
}

func (d *dirHandle) hold() { d.refs.Add(1) }

func (d *dirHandle) release() {
	if d.refs.Add(-1) == 0 {
		_ = d.r.Close()
	}
}

// walkFile is a regular file a walk found.
type walkFile struct {
	dir  *dirHandle // held for the visitor: it must release it
	name string     // in dir
	rel  string     // slash path relative to the workspace root
}

// walker walks the workspace's tree below a directory in lexical order, as git would see
// it: .git directories and what the ignore files ignore are skipped, symbolic links are not
// followed (nor reported), and only regular files are reported.
type walker struct {
	s *Server
	// keepFile, when set, decides whether to report a file (rel path); nil reports all.
	keepFile func(rel string) bool
}

// walk reports every file below start (a directory relative to the root, "." for the
// root) to visit, in order, until visit returns false or cx is done.
func (w walker) walk(cx context.Context, start string, visit func(walkFile) bool) error {
	r, err := w.s.root.r.OpenRoot(start)
	if err != nil {
		return err
	}
	d := &dirHandle{r: r}
	d.hold()
	_, err = w.dir(cx, d, start, w.s.ignoreStack(start), visit)
	return err
}

// dir walks the directory d (rel), releasing it when done; false means stop.
func (w walker) dir(cx context.Context, d *dirHandle, rel string, stack gitignore.Stack, visit func(walkFile) bool) (bool, error) {
	defer d.release()
	if cx.Err() != nil {
		return false, cx.Err()
	}
	entries, err := readDir(d.r)
	if err != nil {
		return true, nil // an unreadable directory is skipped, as git and ripgrep skip it
	}
	if b, err := d.r.ReadFile(".gitignore"); err == nil {
		stack = stack.Push(gitignore.Parse(rel, b))
	}
	for _, e := range entries {
		name := e.Name()
		child := name
		if rel != "." {
			child = rel + "/" + name
		}
		switch t := e.Type(); {
		case t&fs.ModeSymlink != 0, w.s.root.deniedRel(child):
			continue
		case e.IsDir():
			if name == ".git" || stack.Ignored(child, true) {
				continue
			}
			sub, err := d.r.OpenRoot(name)
			if err != nil {
				continue
			}
			sd := &dirHandle{r: sub}
			sd.hold()
			if more, err := w.dir(cx, sd, child, stack, visit); !more || err != nil {
				return false, err
			}
		case t.IsRegular():
			if stack.Ignored(child, false) || (w.keepFile != nil && !w.keepFile(child)) {
				continue
			}
			d.hold()
			if !visit(walkFile{dir: d, name: name, rel: child}) {
				return false, nil
			}
		}
	}
	return true, nil
}

// readDir reads the entries of r's directory, sorted by name.
func readDir(r *os.Root) ([]fs.DirEntry, error) {
	f, err := r.Open(".")
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	entries, err := f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

// globMatcher returns whether a file (slash path relative to base) matches pattern, as
// ripgrep's -g matches: a pattern with a '/' against the path, one without against the base
// name as well.
func globMatcher(pattern string) func(rel string) bool {
	anchored := strings.Contains(pattern, "/")
	return func(rel string) bool {
		if ok, _ := doublestar.Match(pattern, rel); ok {
			return true
		}
		if !anchored {
			ok, _ := doublestar.Match(pattern, path.Base(rel))
			return ok
		}
		return false
	}
}
