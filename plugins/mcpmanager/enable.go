package mcpmanager

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/cordisgo/harness/plugins/mcpclient/serverdoc"
)

// ErrSettingsEdit is matched (errors.Is) by the failures of [SetEnabledInFile] that leave
// the file as it was because the edit cannot be made: no such entry, an entry that is not
// a mapping, or a result that would not validate. It is [serverdoc.ErrEdit].
var ErrSettingsEdit = serverdoc.ErrEdit

// settingsWriteMu serialises the edits this process makes to settings files.
var settingsWriteMu sync.Mutex

// SetEnabledInFile sets the enabled flag of the entry called name in the settings file at
// path, keeping everything else byte for byte: comments, order, quoting and indentation
// ([serverdoc.Editor.SetEnabled]). It rewrites the value of the entry's enabled key, or
// adds "enabled: <value>" as the entry's first key. The edited document is checked like
// the manager reads the file before it replaces the file atomically (the file's mode is
// kept); when the check fails nothing is written, and the error wraps [ErrSettingsEdit]
// and [ErrInvalidSettings] and says why. changed is false when the flag already had that
// value (the file is then not written).
//
// It is safe for concurrent use within a process; edits by other processes at the same
// moment may be lost (the last rename wins).
func SetEnabledInFile(path, name string, enabled bool) (changed bool, err error) {
	settingsWriteMu.Lock()
	defer settingsWriteMu.Unlock()
	if _, err := os.Stat(path); err != nil {
		return false, fmt.Errorf("settings file %q: %w", path, err)
	}
	ed, err := serverdoc.Open(path, serverdoc.EditOptions{Loose: true})
	if errors.Is(err, serverdoc.ErrForeign) {
		return false, fmt.Errorf("%w: %w", ErrSettingsEdit, err)
	}
	if err != nil {
		return false, err
	}
	if changed, err = ed.SetEnabled(name, enabled); err != nil || !changed {
		return false, err
	}
	if e, err := ed.Entry(name); err != nil || e.Enabled != enabled {
		return false, fmt.Errorf("%w: %q: the edit did not take (entry %q)", ErrSettingsEdit, path, name)
	}
	if err := ed.Save(); err != nil {
		return false, err
	}
	return true, nil
}

// EnabledParams are the parameters of mcpManager/setEnabled.
type EnabledParams struct {
	Name    string `json:"name"`
	Enabled bool   `json:"enabled"`
}

// EnabledResult is the answer of mcpManager/setEnabled.
type EnabledResult struct {
	// Changed is false when the entry already had that flag (the file was not written).
	Changed bool `json:"changed"`
}

// SetEnabled enables or disables the settings entry called name by editing the settings
// file that holds it ([SetEnabledInFile]; the project file when it configures name, else
// the settings file); the manager applies the change when it reloads the file, as
// for any edit, and the status views follow. It fails with [ErrNotFound] when no settings
// entry has that name, [ErrConflict] for a registered server or an edit that is refused
// (the message says why; the file is left as it was), and [ErrUnavailable] when the
// manager has no settings file or is stopped.
func (m *Manager) SetEnabled(name string, enabled bool) (EnabledResult, error) {
	m.mu.Lock()
	closed, path := m.closed, m.cfg.settingsPath
	if m.cfg.projectPath != "" && fileHasEntry(m.cfg.projectPath, name) {
		path = m.cfg.projectPath // the project's entry is the one in force
	}
	isSettings := m.settingsEntryLocked(name) != nil
	isRegistered := m.registrationLocked(name) != nil
	m.mu.Unlock()
	switch {
	case closed:
		return EnabledResult{}, errClosed()
	case path == "":
		return EnabledResult{}, errorf(CodeUnavailable, name, "the manager has no settings file")
	case isRegistered:
		return EnabledResult{}, errorf(CodeConflict, name, "the server is registered by a plugin, not configured in the settings file")
	case !isSettings:
		return EnabledResult{}, errorf(CodeNotFound, name, "no settings entry has this name")
	}
	changed, err := SetEnabledInFile(path, name, enabled)
	if err != nil {
		if errors.Is(err, ErrSettingsEdit) {
			return EnabledResult{}, errorf(CodeConflict, name, "%v", err)
		}
		return EnabledResult{}, errorf(CodeUnavailable, name, "%v", err)
	}
	if changed {
		m.log.Info("settings entry edited", "server", name, "enabled", enabled, "file", path)
	}
	return EnabledResult{Changed: changed}, nil
}

// fileHasEntry reports whether the settings file at path configures name.
func fileHasEntry(path, name string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	entries, err := parseSettings(path, data)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.name == name {
			return true
		}
	}
	return false
}
