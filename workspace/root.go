package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// The refusals of the path checks; every tool error about a path wraps one of them.
var (
	// ErrOutsideRoot is a path that names something outside the workspace's root: '..'
	// beyond it, an absolute path elsewhere (/proc/self/root included), or a symbolic link
	// that points out.
	ErrOutsideRoot = errors.New("outside the workspace root")
	// ErrDenied is a path inside one of the denied paths (Options.DenyRead: the user's
	// credentials, keys and the harness's own files).
	ErrDenied = errors.New("denied by the workspace's denyRead list")
	// ErrHardLink is a write to a regular file with more than one hard link: the change
	// would reach names the tools cannot see, some of which may be outside the root.
	ErrHardLink = errors.New("a file with several hard links")
)

// PathError is a refused path: what was asked, and why.
type PathError struct {
	// Path is the path as the caller gave it.
	Path string
	// Detail says more, such as where a symbolic link points; may be empty.
	Detail string
	// Err is ErrOutsideRoot, ErrDenied, ErrHardLink or a file system error.
	Err error
}

func (e *PathError) Error() string {
	msg := fmt.Sprintf("%q: %v", e.Path, e.Err)
	if e.Detail != "" {
		msg += " (" + e.Detail + ")"
	}
	return msg
}

func (e *PathError) Unwrap() error { return e.Err }

// root is the workspace's directory and the checks every path goes through.
//
// Every file operation goes through r, an [os.Root]: whatever a concurrent command does to
// the tree between a check and an open (a directory swapped for a link to /etc), the
// kernel-level resolution it performs never leaves the directory. The checks before it
// exist to give clear errors and to apply the deny list.
type root struct {
	dir   string   // absolute, symbolic links resolved
	alias string   // the directory as configured (absolute, cleaned), when it differs from dir
	r     *os.Root // the directory, opened
	deny  []string // absolute paths, symbolic links resolved where they exist
	// denyRel are the denied paths inside the root, as slash paths relative to it, which
	// walks skip.
	denyRel []string
}

// openRoot opens dir (made absolute and resolved) as the workspace root.
func openRoot(dir string, deny []string) (*root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace root %q: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace root %q: %w", dir, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("workspace root %q: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("workspace root %q: not a directory", dir)
	}
	r, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("workspace root %q: %w", dir, err)
	}
	w := &root{dir: real, r: r}
	if abs != real {
		w.alias = abs
	}
	for _, d := range deny {
		if d == "" {
			continue
		}
		d = filepath.Clean(d)
		if rd, err := filepath.EvalSymlinks(d); err == nil {
			d = rd
		}
		w.deny = append(w.deny, d)
		if d != real && within(d, real) {
			rel, _ := filepath.Rel(real, d)
			w.denyRel = append(w.denyRel, filepath.ToSlash(rel))
		}
	}
	return w, nil
}

func (w *root) close() error { return w.r.Close() }

// within reports whether p (absolute, clean) is dir or below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) || dir == string(filepath.Separator)
}

// rel resolves a path given to a tool — relative to the root, or absolute inside it — to a
// clean slash path relative to the root ("." for the root), following symbolic links that
// exist (a file still to be made is resolved through its nearest existing directory). It
// refuses a path outside the root, through a link pointing out, or in a denied path.
func (w *root) rel(p string) (string, error) {
	refuse := func(err error, detail string) (string, error) {
		return "", &PathError{Path: p, Err: err, Detail: detail}
	}
	if strings.IndexByte(p, 0) >= 0 {
		return refuse(fs.ErrInvalid, "a NUL byte in the path")
	}
	name := p
	if name == "" {
		name = "."
	}
	var abs string
	if filepath.IsAbs(name) {
		abs = filepath.Clean(name)
		if w.alias != "" && within(abs, w.alias) {
			abs = filepath.Join(w.dir, strings.TrimPrefix(abs, w.alias))
		}
		if !within(abs, w.dir) {
			return refuse(ErrOutsideRoot, "the root is "+w.dir)
		}
	} else {
		abs = filepath.Join(w.dir, name)
		if !within(abs, w.dir) {
			return refuse(ErrOutsideRoot, "'..' leaves the root "+w.dir)
		}
	}
	real, err := resolveExisting(abs)
	if err != nil {
		return refuse(err, "")
	}
	if !within(real, w.dir) {
		return refuse(ErrOutsideRoot, "a symbolic link on the way points to "+real)
	}
	for _, d := range w.deny {
		if within(real, d) {
			return refuse(ErrDenied, "")
		}
	}
	r, err := filepath.Rel(w.dir, real)
	if err != nil {
		return refuse(err, "")
	}
	return filepath.ToSlash(r), nil
}

// resolveExisting resolves the symbolic links of abs: of the whole path when it exists,
// else of its nearest existing ancestor, with the missing rest appended.
func resolveExisting(abs string) (string, error) {
	rest := ""
	for p := abs; ; {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// deniedRel reports whether rel (a slash path relative to the root) is a denied path or
// inside one.
func (w *root) deniedRel(rel string) bool {
	for _, d := range w.denyRel {
		if rel == d || strings.HasPrefix(rel, d+"/") {
			return true
		}
	}
	return false
}
