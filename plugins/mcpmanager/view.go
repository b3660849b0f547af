package mcpmanager

import (
	"bytes"
	"encoding/json"
	"slices"
	"time"

	"github.com/cordisgo/harness/plugins/mcpclient"
)

// State is a managed server's status as a management surface shows it.
type State string

// Server states.
const (
	// StateDisabled: the settings entry has enabled: false; nothing runs.
	StateDisabled State = "disabled"
	// StateStarting: an instance is mounted and has not connected yet (or is waiting for
	// the tools service).
	StateStarting State = "starting"
	// StateConnected: the instance is connected and its tools are registered.
	StateConnected State = "connected"
	// StateReconnecting: the instance lost its connection and is retrying (Attempt of
	// MaxAttempts).
	StateReconnecting State = "reconnecting"
	// StateNeedsAuth: the server wants an OAuth login; Error carries the hint
	// (`harness mcp login NAME`). No reconnect budget is spent while waiting.
	StateNeedsAuth State = "needs-auth"
	// StateFailed: the entry could not be resolved or mounted, the instance failed to load,
	// or it gave up reconnecting. Error says why.
	StateFailed State = "failed"
	// StateLazy: a lazy server (startup: lazy) that has not started: its tools are the
	// catalog cache's, and the first call starts it.
	StateLazy State = "lazy"
	// StateIdle: a lazy server stopped after its idle timeout; its tools stay, and the next
	// call starts it again.
	StateIdle State = "idle"
	// StateStopping: the instance is being disposed (replaced, disabled or removed).
	StateStopping State = "stopping"
	// StateCleanupIncomplete: an instance's process group could not be confirmed gone; no
	// new instance is started for this name until the host restarts.
	StateCleanupIncomplete State = "cleanup-incomplete"
)

// Source says where a server's entry comes from.
type Source string

// Entry sources.
const (
	// SourceSettings: the settings file.
	SourceSettings Source = "settings"
	// SourceRegistered: a plugin's [Manager.Register] call.
	SourceRegistered Source = "registered"
)

// The settings layers a View's Layer names.
const (
	LayerUser    = "user"
	LayerProject = "project"
)

// ServerInfo is what a server reported about itself when it initialized. It is a plain
// value.
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	// Description is the server's description of itself, as it sent it.
	Description string `json:"description,omitempty"`
}

// View is a managed server as [Manager.List] shows it. It never carries a secret: Config
// is the entry as written with env and header values redacted and templates unresolved,
// and text that came from the server (errors, stderr) has every resolved template value
// scrubbed.
//
// A View is a value; its slices are never shared with the manager.
type View struct {
	// Name is the settings key or registered name.
	Name string `json:"name"`
	// Source is settings or registered.
	Source Source `json:"source"`
	// Layer says which settings file an entry of Source settings comes from: [LayerUser] or
	// [LayerProject] (the project's .harness/mcp-servers.yaml, whose entry of a name
	// replaces the user's).
	Layer string `json:"layer,omitempty"`
	// Owner names the scope that registered the server (registered entries only).
	Owner string `json:"owner,omitempty"`
	// Enabled is the entry's enabled flag (always true for registered entries).
	Enabled bool `json:"enabled"`
	// Removed marks a retained record: the entry is no longer configured or registered,
	// but its instance is still stopping or its cleanup is incomplete.
	Removed bool `json:"removed,omitempty"`
	// Transport is the configured transport, or the one in use once connected ("sse" after
	// the legacy fallback).
	Transport string `json:"transport"`
	// Status is the current state.
	Status State `json:"status"`
	// Error explains a failed, reconnecting or cleanup-incomplete state.
	Error string `json:"error,omitempty"`
	// Attempt and MaxAttempts count connection attempts in the current run of failures.
	Attempt     int `json:"attempt,omitempty"`
	MaxAttempts int `json:"maxAttempts,omitempty"`
	// Starts counts the instances mounted for this name since the manager started.
	Starts int `json:"starts"`
	// Since is when Status was entered; StartedAt when the current instance was mounted;
	// ConnectedAt when it last connected; UpdatedAt when anything in the view last changed.
	Since       time.Time `json:"since,omitzero"`
	StartedAt   time.Time `json:"startedAt,omitzero"`
	ConnectedAt time.Time `json:"connectedAt,omitzero"`
	UpdatedAt   time.Time `json:"updatedAt,omitzero"`
	// ServerInfo and ProtocolVersion come from the server's initialize answer.
	ServerInfo      *ServerInfo `json:"serverInfo,omitempty"`
	ProtocolVersion string      `json:"protocolVersion,omitempty"`
	// Tools lists the public names of the server's registered tools.
	Tools []string `json:"tools"`
	// InstructionBytes is the size of the server's published instructions.
	InstructionBytes int `json:"instructionBytes,omitempty"`
	// StderrTail is the end of a stdio server's stderr.
	StderrTail string `json:"stderrTail,omitempty"`
	// Config is the entry as written, redacted (see [mcpclient.Config.Redacted]).
	Config mcpclient.Config `json:"config"`
}

// equal compares two views, ignoring UpdatedAt.
func (v View) equal(o View) bool {
	a, b := v.fingerprint(), o.fingerprint()
	return a != nil && b != nil && bytes.Equal(a, b)
}

// fingerprint is the view's JSON without UpdatedAt (nil if it cannot be encoded): equal
// fingerprints, equal views.
func (v View) fingerprint() []byte {
	v.UpdatedAt = time.Time{}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// SettingsStatus describes the settings file as the manager last read it. It is a plain
// value.
type SettingsStatus struct {
	// File is the settings file's absolute path ("" when the manager has none).
	File string `json:"file,omitempty"`
	// ProjectFile is the project settings file layered on top of File, if any.
	ProjectFile string `json:"projectFile,omitempty"`
	// Missing is true while the file (and the project file) does not exist (no servers
	// are configured).
	Missing bool `json:"missing,omitempty"`
	// LoadedAt is when the running configuration was last read successfully.
	LoadedAt time.Time `json:"loadedAt,omitzero"`
	// Error is why the latest read was rejected; the last good configuration keeps
	// running. Empty once a read succeeds.
	Error string `json:"error,omitempty"`
	// ErrorAt is when the latest read was rejected.
	ErrorAt time.Time `json:"errorAt,omitzero"`
}

// Snapshot is the whole list as [Manager.Snapshot], [Manager.Watch] and the remote API's
// mcpManager/list and mcpManager/watch deliver it.
//
// A Snapshot is a value; its slices are never shared with the manager.
type Snapshot struct {
	// Servers are the views: configured entries in document order, then registered entries
	// in registration order, then retained records of removed entries.
	Servers []View `json:"servers"`
	// Settings describes the settings file.
	Settings SettingsStatus `json:"settings"`
	// Version increases with every published change.
	Version uint64 `json:"version"`
}

// StatusChange is the argument of [StatusEvent]: a server whose view changed, and the view
// now current. Listeners share its slices and maps: treat it as read-only.
type StatusChange struct {
	// Name is the settings key or registered name.
	Name string `json:"name"`
	// Status is the server's view now current (for a removed server, its last view).
	Status View `json:"status"`
	// Removed is true when the server left the list: its entry is gone and its instance
	// disposed.
	Removed bool `json:"removed,omitempty"`
}

func cloneView(v View) View {
	v.Tools = slices.Clone(v.Tools)
	if v.ServerInfo != nil {
		si := *v.ServerInfo
		v.ServerInfo = &si
	}
	v.Config = v.Config.Redacted() // a deep copy
	return v
}
