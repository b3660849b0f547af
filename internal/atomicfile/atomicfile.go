// Package atomicfile replaces a file's content atomically: the data goes to a temporary
// file in the same directory, which is optionally checked, synced and then renamed over
// the file. Readers see the old content or the new one, never a part; a write that fails
// (or whose check fails) leaves the last good file in place and no temporary file behind.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Options say how [Write] writes. The zero value writes mode 0600, fsyncs, creates no
// directory and runs no check.
type Options struct {
	// Mode is the permission of the written file; zero means 0600.
	Mode fs.FileMode
	// KeepMode writes with the permission of the file being replaced when it exists
	// (Mode then applies to a new file only).
	KeepMode bool
	// DirMode, when not zero, creates the file's missing directories with that
	// permission; when zero a missing directory is an error.
	DirMode fs.FileMode
	// Check, when set, is called with the path of the written (and closed) temporary
	// file before the rename; an error leaves the file as it was and is returned as a
	// [*CheckError]. The temporary file keeps the file's extension, so a check that
	// goes by the extension reads it as the file's format.
	Check func(tmp string) error
	// NoSync skips the fsync of the data and of the directory after the rename: for
	// caches, whose loss on a crash costs a rebuild, not state.
	NoSync bool
}

// ErrCheck is matched (errors.Is) by the error of a write whose [Options.Check] failed.
var ErrCheck = errors.New("the written content did not pass the check")

// CheckError is the error of a write whose [Options.Check] failed: the file at Path was
// not written. Its message names Path, with the temporary file's name (which the check's
// error may mention) replaced by Path. A CheckError is a value; it is safe to share.
type CheckError struct {
	// Path is the file that was not written.
	Path string
	// Temp is the temporary file the check read (removed by then).
	Temp string
	// Err is the check's error.
	Err error
}

func (e *CheckError) Error() string {
	return fmt.Sprintf("%s not written: %s", e.Path, strings.ReplaceAll(e.Err.Error(), e.Temp, e.Path))
}

// Unwrap returns the check's error and [ErrCheck].
func (e *CheckError) Unwrap() []error { return []error{e.Err, ErrCheck} }

// Write replaces the content of the file at path with data as opts say. Errors name path
// (and wrap the underlying error, e.g. fs.ErrPermission). Write is safe for concurrent use
// on different paths; concurrent writes to one path each leave a whole file (the last
// rename wins), so callers serialize writes whose order matters.
func Write(path string, data []byte, opts Options) (err error) {
	dir := filepath.Dir(path)
	if opts.DirMode != 0 {
		if err := os.MkdirAll(dir, opts.DirMode); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	mode := opts.Mode
	if mode == 0 {
		mode = 0o600
	}
	if opts.KeepMode {
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm()
		}
	}
	base := filepath.Base(path)
	ext := filepath.Ext(base)
	f, err := os.CreateTemp(dir, "."+strings.TrimSuffix(base, ext)+".tmp-*"+ext)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	closed := false
	defer func() {
		if err != nil {
			if !closed {
				_ = f.Close() // the write already failed; its error is the one to report
			}
			_ = os.Remove(tmp) // best effort: a leftover is hidden (dot name) and harmless
		}
	}()
	if err := f.Chmod(mode); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if !opts.NoSync {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	closed = true
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if opts.Check != nil {
		if err := opts.Check(tmp); err != nil {
			return &CheckError{Path: path, Temp: tmp, Err: err}
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if !opts.NoSync {
		syncDir(dir)
	}
	return nil
}

// syncDir makes the rename durable. It is best effort: the new content is in place
// either way, and some systems cannot sync a directory.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()  // best effort, see above
	_ = d.Close() // read-only handle
}
