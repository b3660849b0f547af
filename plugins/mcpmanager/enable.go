package mcpmanager

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/cordisgo/harness/internal/atomicfile"
)

// ErrSettingsEdit is matched (errors.Is) by the failures of [SetEnabledInFile] that leave
// the file as it was because the edit cannot be made: no such entry, an entry that is not
// a mapping, or a result that would not validate.
var ErrSettingsEdit = errors.New("settings file not edited")

// settingsWriteMu serialises the edits this process makes to settings files.
var settingsWriteMu sync.Mutex

// SetEnabledInFile sets the enabled flag of the entry called name in the settings file at
// path, keeping everything else byte for byte: comments, order, quoting and indentation.
// It rewrites the value of the entry's enabled key, or adds "enabled: <value>" as the
// entry's first key. The edited document is validated like the manager validates the file
// before it replaces the file atomically (a temporary file in the same directory, then a
// rename; the file's mode is kept); when validation fails nothing is written, and the
// error wraps [ErrSettingsEdit] and [ErrInvalidSettings] and says why. changed is false
// when the flag already had that value (the file is then not written).
//
// It is safe for concurrent use within a process; edits by other processes at the same
// moment may be lost (the last rename wins).
func SetEnabledInFile(path, name string, enabled bool) (changed bool, err error) {
	settingsWriteMu.Lock()
	defer settingsWriteMu.Unlock()
	data, err := os.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("settings file %q: %w", path, err)
	}
	out, changed, err := setEnabled(path, data, name, enabled)
	if err != nil || !changed {
		return false, err
	}
	entries, err := parseSettings(path, out)
	if err != nil {
		return false, fmt.Errorf("%w: %q: the edit would make it invalid: %w", ErrSettingsEdit, path, err)
	}
	found := false
	for _, e := range entries {
		if e.name == name {
			found = e.enabled == enabled
		}
	}
	if !found {
		return false, fmt.Errorf("%w: %q: the edit did not take (entry %q)", ErrSettingsEdit, path, name)
	}
	return true, replaceFile(path, out)
}

// setEnabled returns data with the flag of entry name set.
func setEnabled(path string, data []byte, name string, enabled bool) ([]byte, bool, error) {
	fail := func(format string, args ...any) ([]byte, bool, error) {
		return nil, false, fmt.Errorf("%w: %q: %s", ErrSettingsEdit, path, fmt.Sprintf(format, args...))
	}
	if _, err := parseSettings(path, data); err != nil {
		return nil, false, fmt.Errorf("%w: %q is invalid as it is (fix it first): %w", ErrSettingsEdit, path, err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return fail("not a YAML document")
	}
	var entry *yaml.Node
	if servers := mapValue(doc.Content[0], "servers"); servers != nil {
		entry = mapValue(servers, name)
	}
	if entry == nil {
		return fail("no server %q in the file", name)
	}
	if entry.Kind != yaml.MappingNode {
		return fail("server %q is not a mapping", name)
	}
	value := "false"
	if enabled {
		value = "true"
	}
	if v := mapValue(entry, "enabled"); v != nil {
		if v.Value == value {
			return data, false, nil
		}
		start, ok := offset(data, v.Line, v.Column)
		if !ok {
			return fail("cannot locate the enabled key of %q", name)
		}
		end := start
		for end < len(data) && bytes.IndexByte([]byte(" \t\r\n,}#"), data[end]) < 0 {
			end++
		}
		return splice(data, start, end, value), true, nil
	}
	if entry.Style&yaml.FlowStyle != 0 {
		start, ok := offset(data, entry.Line, entry.Column) // at "{"
		if !ok || start >= len(data) || data[start] != '{' {
			return fail("cannot locate the entry of %q", name)
		}
		ins := "enabled: " + value
		if strings.EqualFold(filepath.Ext(path), ".json") {
			ins = `"enabled": ` + value
		}
		if len(entry.Content) > 0 {
			ins += ", "
		}
		return splice(data, start+1, start+1, ins), true, nil
	}
	first := entry.Content[0]
	start, ok := offset(data, first.Line, first.Column)
	if !ok {
		return fail("cannot locate the entry of %q", name)
	}
	indent := string(bytes.Repeat([]byte(" "), first.Column-1))
	return splice(data, start, start, "enabled: "+value+"\n"+indent), true, nil
}

// mapValue returns the value of key in the mapping node m.
func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// offset converts a 1-based line and column (in characters) to a byte offset.
func offset(data []byte, line, col int) (int, bool) {
	at := 0
	for l := 1; l < line; l++ {
		i := bytes.IndexByte(data[at:], '\n')
		if i < 0 {
			return 0, false
		}
		at += i + 1
	}
	for c := 1; c < col; c++ {
		if at >= len(data) || data[at] == '\n' {
			return 0, false
		}
		_, n := utf8.DecodeRune(data[at:])
		at += n
	}
	return at, true
}

func splice(data []byte, start, end int, s string) []byte {
	out := make([]byte, 0, len(data)+len(s))
	out = append(out, data[:start]...)
	out = append(out, s...)
	return append(out, data[end:]...)
}

// replaceFile writes data to path atomically, keeping the file's mode.
func replaceFile(path string, data []byte) error {
	if err := atomicfile.Write(path, data, atomicfile.Options{Mode: 0o644, KeepMode: true}); err != nil {
		return fmt.Errorf("settings file: %w", err)
	}
	return nil
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
