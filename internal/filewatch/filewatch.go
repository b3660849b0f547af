// Package filewatch reports, debounced, the changes of one configuration file: the MCP
// manager's settings files and the profile file that `harness run` hosts. It watches the
// file's directory (the file may be replaced by a rename, or not exist yet) and polls when
// the directory cannot be watched, setting the watcher up again at the same pace.
package filewatch

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// PollInterval is how often the file is checked when it cannot be watched (its directory
// does not exist, or the platform's watcher is unavailable); the watcher is set up again at
// the same pace.
const PollInterval = time.Second

// Options configure a [Watch].
type Options struct {
	// Debounce is how long the file must stay unchanged before OnChange is called.
	Debounce time.Duration
	// OnChange is called from Run's goroutine after each settled change; required.
	OnChange func()
	// Logger receives the watch's failures (nil: slog.Default()).
	Logger *slog.Logger
}

// A Watch watches one file. Run's loop is its only user after New; Close is for a watch
// whose Run never started.
type Watch struct {
	opts Options
	path string
	dir  string
	base string
	w    *fsnotify.Watcher
	sig  fileSig // last polled signature, when polling
}

// fileSig is what polling compares.
type fileSig struct {
	exists bool
	size   int64
	mod    time.Time
	info   os.FileInfo
}

func statSig(path string) fileSig {
	fi, err := os.Stat(path)
	if err != nil {
		return fileSig{}
	}
	return fileSig{exists: true, size: fi.Size(), mod: fi.ModTime(), info: fi}
}

func (a fileSig) same(b fileSig) bool {
	if a.exists != b.exists {
		return false
	}
	if !a.exists {
		return true
	}
	return a.size == b.size && a.mod.Equal(b.mod) && os.SameFile(a.info, b.info)
}

// New starts watching path before the caller's first read, so no change is lost between
// the two; Run reports the changes.
func New(path string, opts Options) *Watch {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	w := &Watch{opts: opts, path: path, dir: filepath.Dir(path), base: filepath.Base(path)}
	w.arm()
	return w
}

// arm sets the directory watch up; on failure the loop polls.
func (w *Watch) arm() bool {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		w.sig = statSig(w.path)
		return false
	}
	if err := fw.Add(w.dir); err != nil {
		_ = fw.Close()
		w.sig = statSig(w.path)
		return false
	}
	w.w = fw
	return true
}

// Close releases the watcher of a Watch whose Run was never called (Run releases its own).
func (w *Watch) Close() {
	if w.w != nil {
		_ = w.w.Close()
		w.w = nil
	}
	w.sig = statSig(w.path)
}

// relevant reports whether an event in the directory may change what the path reads: an
// event on the file's name, or any event when the path is a symbolic link (a swapped link
// target elsewhere in the directory, as with mounted config maps).
func (w *Watch) relevant(ev fsnotify.Event) bool {
	if filepath.Base(ev.Name) == w.base {
		return true
	}
	fi, err := os.Lstat(w.path)
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}

// Run is the watch loop, until run is done: any relevant change restarts the debounce
// timer, and OnChange is called when the timer fires. It always returns nil (the signature
// of a scope's goroutine).
func (w *Watch) Run(runcx context.Context) error {
	debounce := time.NewTimer(time.Hour)
	debounce.Stop()
	poll := time.NewTicker(PollInterval)
	defer func() {
		debounce.Stop()
		poll.Stop()
		if w.w != nil {
			_ = w.w.Close()
		}
	}()
	for {
		var events <-chan fsnotify.Event
		var errs <-chan error
		if w.w != nil {
			events, errs = w.w.Events, w.w.Errors
		}
		select {
		case <-runcx.Done():
			return nil
		case ev, ok := <-events:
			if !ok {
				w.Close()
				continue
			}
			if filepath.Clean(ev.Name) == filepath.Clean(w.dir) && ev.Has(fsnotify.Remove|fsnotify.Rename) {
				w.Close() // the directory went away: poll until it is back
				debounce.Reset(w.opts.Debounce)
				continue
			}
			if w.relevant(ev) {
				debounce.Reset(w.opts.Debounce)
			}
		case err, ok := <-errs:
			if !ok {
				w.Close()
				continue
			}
			w.opts.Logger.Warn("file watch failed; polling instead until it can be set up again", "file", w.path, "err", err)
			w.Close()
			debounce.Reset(w.opts.Debounce)
		case <-poll.C:
			if w.w != nil {
				continue
			}
			if w.arm() {
				debounce.Reset(w.opts.Debounce) // changes made while unwatched
				continue
			}
			if sig := statSig(w.path); !sig.same(w.sig) {
				w.sig = sig
				debounce.Reset(w.opts.Debounce)
			}
		case <-debounce.C:
			w.opts.OnChange()
		}
	}
}
