package host

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/cordisgo/harness/internal/filewatch"
	"github.com/cordisgo/harness/profiles"
)

// profileDebounce is how long a profile file must stay unchanged before Watch applies it
// (editors write in several steps).
const profileDebounce = 150 * time.Millisecond

// reloader applies edits of the hosted profile's files to the running tree, as the MCP
// manager applies edits of its settings files (see Watch). It is safe for concurrent use:
// applies are serialized.
type reloader struct {
	h    *Host
	load func() (*profiles.Profile, error)
	mu   sync.Mutex
	rows []profiles.Row // the rows mounted, as mountedRows returned them
}

// Watch starts applying edits of the files the host's profile was read from (none for a
// built-in profile) to the running tree, until the returned stop is called (it ends the
// watches and waits for an apply in progress). At every change, load loads the profile
// again (as it was loaded at start, checked) and the difference is applied: a top-level
// row whose definition changed is given its new configuration (ctx.Scope.Update: in place
// when the plugin accepts it, else the scope restarts with it), or disposed and mounted
// again when its plugin or nested rows changed; a new row is mounted, a removed or
// disabled one disposed (bounded by Options.ShutdownTimeout), and an unchanged one is left
// alone (its scope, and a stdio server's process, stay). A file that does not load keeps
// the running rows, with one error logged naming the file and the key. Call it after
// Mount, at most once.
func (h *Host) Watch(load func() (*profiles.Profile, error)) (stop func()) {
	files := h.profile.Files
	if len(files) == 0 {
		return func() {}
	}
	r := &reloader{h: h, load: load, rows: h.rows}
	cx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, f := range files {
		w := filewatch.New(f, filewatch.Options{Debounce: profileDebounce, OnChange: func() { r.apply(cx, f) }, Logger: h.logger})
		wg.Go(func() { _ = w.Run(cx) })
	}
	return func() { cancel(); wg.Wait() }
}

// apply loads the profile again and applies the difference; file is the one that changed,
// named in messages.
func (r *reloader) apply(cx context.Context, file string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.h
	p, err := r.load()
	if err != nil {
		h.logger.Error("profile file rejected; the running profile stays", "file", file, "err", err)
		return
	}
	next := h.mountedRows(p.Rows)
	old := map[string]profiles.Row{}
	for _, row := range r.rows {
		if row.Enabled {
			old[strings.ToLower(row.ID)] = row
		}
	}
	var added, removed, changed []string
	fresh := map[string]bool{}
	for _, n := range next {
		if n.Enabled {
			fresh[strings.ToLower(n.ID)] = true
		}
	}
	for _, o := range r.rows {
		if o.Enabled && !fresh[strings.ToLower(o.ID)] {
			r.dispose(cx, o)
			removed = append(removed, o.ID)
		}
	}
	for _, n := range next {
		if !n.Enabled {
			continue
		}
		o, had := old[strings.ToLower(n.ID)]
		switch {
		case !had:
			r.mount(n)
			added = append(added, n.ID)
		case reflect.DeepEqual(o, n):
		case o.Use == n.Use && !o.AgentScope() && !n.AgentScope() && o.Path == n.Path && h.mounts.scope(n.Path) != nil:
			if err := h.mounts.scope(n.Path).Update(n.Config); err != nil {
				h.logger.Error("profile row not updated", "file", file, "row", n.Path, "err", err)
				continue
			}
			changed = append(changed, n.ID)
		default:
			r.dispose(cx, o)
			r.mount(n)
			changed = append(changed, n.ID)
		}
	}
	r.rows = next
	if p.Elicitation != h.profile.Elicitation || !reflect.DeepEqual(p.Fleet, h.profile.Fleet) {
		h.logger.Warn("the profile's elicitation and fleet keys apply at the next start", "file", file)
	}
	h.logger.Info("profile file applied", "file", file, "added", strings.Join(added, ","),
		"removed", strings.Join(removed, ","), "changed", strings.Join(changed, ","))
}

// dispose disposes the scope of row (and everything mounted in it), bounded by
// Options.ShutdownTimeout.
func (r *reloader) dispose(cx context.Context, row profiles.Row) {
	s := r.h.mounts.remove(row.Path)
	if s == nil {
		return
	}
	timeout := r.h.opts.ShutdownTimeout
	if timeout <= 0 {
		timeout = DefaultShutdownTimeout
	}
	dcx, cancel := context.WithTimeout(context.WithoutCancel(cx), timeout)
	defer cancel()
	if err := s.Dispose(dcx); err != nil {
		r.h.logger.Error("profile row not disposed cleanly", "row", row.Path, "err", err)
	}
}

// mount mounts row at the root, as start-up does.
func (r *reloader) mount(row profiles.Row) {
	if err := mountRows(r.h.root, r.h.catalog, []profiles.Row{row}, r.h.mounts); err != nil {
		r.h.logger.Error("profile row not mounted", "row", row.Path, "err", err)
	}
}
