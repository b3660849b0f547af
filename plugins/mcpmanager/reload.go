package mcpmanager

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// pollInterval is how often the settings file is checked when it cannot be watched (its
// directory does not exist, or the platform's watcher is unavailable); the watcher is set
// up again at the same pace.
const pollInterval = time.Second

// settingsWatch watches the settings file's directory (the file itself may be replaced by
// a rename, or not exist yet) and reports changes, debounced, to reload.
type settingsWatch struct {
	m    *Manager
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

// newSettingsWatch starts watching before the first read, so no change is lost between
// the two.
func newSettingsWatch(m *Manager, path string) *settingsWatch {
	sw := &settingsWatch{m: m, path: path, dir: filepath.Dir(path), base: filepath.Base(path)}
	sw.arm()
	return sw
}

// arm sets the directory watch up; on failure the loop polls.
func (sw *settingsWatch) arm() bool {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		sw.sig = statSig(sw.path)
		return false
	}
	if err := w.Add(sw.dir); err != nil {
		_ = w.Close()
		sw.sig = statSig(sw.path)
		return false
	}
	sw.w = w
	return true
}

func (sw *settingsWatch) disarm() {
	if sw.w != nil {
		_ = sw.w.Close()
		sw.w = nil
	}
	sw.sig = statSig(sw.path)
}

// relevant reports whether an event in the directory may change what the settings path
// reads: an event on the file's name, or any event when the path is a symbolic link (a
// swapped link target elsewhere in the directory, as with mounted config maps).
func (sw *settingsWatch) relevant(ev fsnotify.Event) bool {
	if filepath.Base(ev.Name) == sw.base {
		return true
	}
	fi, err := os.Lstat(sw.path)
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}

// run is the watch loop: any relevant change restarts the debounce timer, and the file is
// read when the timer fires.
func (sw *settingsWatch) run(run context.Context) error {
	m := sw.m
	debounce := time.NewTimer(time.Hour)
	debounce.Stop()
	poll := time.NewTicker(pollInterval)
	defer func() {
		debounce.Stop()
		poll.Stop()
		if sw.w != nil {
			_ = sw.w.Close()
		}
	}()
	for {
		var events <-chan fsnotify.Event
		var errs <-chan error
		if sw.w != nil {
			events, errs = sw.w.Events, sw.w.Errors
		}
		select {
		case <-run.Done():
			return nil
		case ev, ok := <-events:
			if !ok {
				sw.disarm()
				continue
			}
			if filepath.Clean(ev.Name) == filepath.Clean(sw.dir) && ev.Has(fsnotify.Remove|fsnotify.Rename) {
				sw.disarm() // the directory went away: poll until it is back
				debounce.Reset(m.cfg.debounce())
				continue
			}
			if sw.relevant(ev) {
				debounce.Reset(m.cfg.debounce())
			}
		case err, ok := <-errs:
			if !ok {
				sw.disarm()
				continue
			}
			m.log.Warn("settings file watch failed; polling instead until it can be set up again", "file", sw.path, "err", err)
			sw.disarm()
			debounce.Reset(m.cfg.debounce())
		case <-poll.C:
			if sw.w != nil {
				continue
			}
			if sw.arm() {
				debounce.Reset(m.cfg.debounce()) // changes made while unwatched
				continue
			}
			if sig := statSig(sw.path); !sig.same(sw.sig) {
				sw.sig = sig
				debounce.Reset(m.cfg.debounce())
			}
		case <-debounce.C:
			m.reload()
		}
	}
}

// reload reads the settings file (and the project settings file layered on it) and
// applies them; an unreadable or invalid file is logged and reported, and the running
// configuration stays. The two files may change at different times: each reload reads
// both.
func (m *Manager) reload() {
	var entries []*entry
	var all []byte
	missing := true
	for i, path := range []string{m.cfg.settingsPath, m.cfg.projectPath} {
		if path == "" {
			continue
		}
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			all = append(all, byte(i), 0) // a missing file differs from an empty one
			continue
		}
		if err != nil {
			m.rejectSettings(settingsProblem(path, 0, "", "cannot read: %v", pathErr(err)))
			return
		}
		missing = false
		all = append(append(append(all, byte(i), 1), data...), 0)
		layer, warnings, err := readSettings(path, data)
		if err != nil {
			m.rejectSettings(err)
			return
		}
		for _, w := range warnings {
			m.log.Warn("settings file: "+w, "file", path)
		}
		for _, e := range layer {
			e.layer = [...]string{LayerUser, LayerProject}[i]
		}
		entries = layerEntries(entries, layer)
	}
	m.mu.Lock()
	same := m.sstatus.Error == "" && !m.sstatus.LoadedAt.IsZero() && m.sstatus.Missing == missing && bytes.Equal(all, m.lastData)
	m.mu.Unlock()
	if same {
		return
	}
	m.applySettings(entries, missing, all)
}

// layerEntries returns base with top layered on it: an entry of top replaces base's entry
// of the same name in its place; the others are appended in top's order.
func layerEntries(base, top []*entry) []*entry {
	out := slices.Clone(base)
	for _, e := range top {
		i := slices.IndexFunc(out, func(b *entry) bool { return b.name == e.name })
		if i >= 0 {
			out[i] = e
		} else {
			out = append(out, e)
		}
	}
	return out
}

// rejectSettings records a rejected read.
func (m *Manager) rejectSettings(err error) {
	m.log.Error("settings file rejected; the last good configuration keeps running", "err", err)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sstatus.Error = err.Error()
	m.sstatus.ErrorAt = time.Now()
	m.dirtyLocked()
}

// applySettings makes entries the running settings and reconciles every name whose entry
// was added, removed or changed. Probes of those names are cancelled.
func (m *Manager) applySettings(entries []*entry, missing bool, data []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	old := make(map[string]*entry, len(m.settings))
	for _, e := range m.settings {
		old[e.name] = e
	}
	var added, removed, changed []string
	next := make(map[string]bool, len(entries))
	for _, e := range entries {
		next[e.name] = true
		switch o := old[e.name]; {
		case o == nil:
			added = append(added, e.name)
		case o.key != e.key:
			changed = append(changed, e.name)
		}
		if r := m.registrationLocked(e.name); r != nil && old[e.name] == nil {
			m.log.Warn("settings entry names a registered server; the registration keeps the name", "server", e.name, "owner", r.owner)
		}
	}
	for _, e := range m.settings {
		if !next[e.name] {
			removed = append(removed, e.name)
		}
	}
	m.settings = entries
	m.lastData = data
	m.sstatus.Missing = missing
	m.sstatus.Error, m.sstatus.ErrorAt = "", time.Time{}
	m.sstatus.LoadedAt = time.Now()
	for _, group := range [][]string{added, removed, changed} {
		for _, name := range group {
			rec := m.recordLocked(name)
			cancelProbesLocked(rec)
			if rec.mountErr != "" {
				rec.mountKey, rec.mountErr = "", ""
			}
			m.kickLocked(rec)
		}
	}
	m.dirtyLocked()
	if len(added)+len(removed)+len(changed) > 0 || missing {
		m.log.Info("settings file applied", "file", m.cfg.settingsPath, "project_file", m.cfg.projectPath, "servers", len(entries),
			"added", strings.Join(added, ","), "removed", strings.Join(removed, ","), "changed", strings.Join(changed, ","), "missing", missing)
	}
}
