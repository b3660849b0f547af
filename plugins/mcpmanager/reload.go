package mcpmanager

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/cordisgo/harness/plugins/mcpclient/serverdoc"
)

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
			m.rejectSettings(serverdoc.ReadFileProblem(path, err))
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
	switch {
	case len(added)+len(removed)+len(changed) > 0:
		attrs := []any{"file", m.cfg.settingsPath, "project_file", m.cfg.projectPath, "servers", len(entries)}
		for _, g := range []struct {
			key   string
			names []string
		}{{"added", added}, {"removed", removed}, {"changed", changed}} {
			if len(g.names) > 0 {
				attrs = append(attrs, g.key, strings.Join(g.names, ","))
			}
		}
		m.log.Info("settings file applied", attrs...)
	case missing:
		m.log.Info("no MCP settings file yet; harness mcp add writes one", "file", m.cfg.settingsPath, "project_file", m.cfg.projectPath)
	}
}
