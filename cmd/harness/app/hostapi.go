package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpmanager"
	"github.com/cordisgo/harness/plugins/remote"
)

// The host's own remote methods, exposed by a long-running host (run) next to the
// manager's: they answer for every MCP server of the host, the manager's and the profile's
// own client rows alike, exactly as the same command answers in process. Each is typed
// (ctx.ExposeRemote): the types named here are the whole contract, and the commands call
// the methods with them (remote.Call).
const (
	methodHostInfo    = "harness/host"       // struct{} → hostInfo
	methodHostList    = "harness/mcpList"    // struct{} → hostList
	methodHostProbe   = "harness/mcpProbe"   // mcpmanager.NameParams → mcpmanager.ProbeResult
	methodHostRestart = "harness/mcpRestart" // restartParams → stream of restartEvent
)

// defaultRestartTimeout bounds mcp restart's wait for the outcome.
const defaultRestartTimeout = 30 * time.Second

// hostInfo is the answer of harness/host: which process and profile a host is.
type hostInfo struct {
	PID     int    `json:"pid"`
	Profile string `json:"profile"`
	Source  string `json:"source"`
}

// hostList is the answer of harness/mcpList, what mcp list prints: the manager's snapshot
// (if the profile has a manager; else only its servers, the profile's clients) and, next
// to a manager's servers, the profile's own client rows, which a manager does not list.
// A client row is a manager's view with Source "profile".
type hostList struct {
	mcpmanager.Snapshot
	Unmanaged []mcpmanager.View `json:"unmanaged,omitempty"`
}

// restartParams are the parameters of harness/mcpRestart.
type restartParams struct {
	Name      string `json:"name"`
	TimeoutMs int64  `json:"timeoutMs,omitempty"`
}

// Validate requires a name and a timeout that is not negative.
func (p restartParams) Validate() error {
	var probs ctx.Problems
	if p.Name == "" {
		probs.Add("name", "required: the server's name")
	}
	if p.TimeoutMs < 0 {
		probs.Add("timeoutMs", "expected a number of milliseconds ≥ 0")
	}
	return probs.Err()
}

// restartEvent is one value of the harness/mcpRestart stream: the server's status as it
// changes, the last one with Done set.
type restartEvent struct {
	Server mcpmanager.View `json:"server"`
	Done   bool            `json:"done,omitempty"`
}

// restartTimeoutError is a restart whose server neither connected nor failed in time.
type restartTimeoutError struct {
	name    string
	timeout time.Duration
	last    mcpmanager.View
}

func (e *restartTimeoutError) Error() string {
	msg := fmt.Sprintf("mcp server %q restarted but is still %s after %v", e.name, e.last.Status, e.timeout)
	if e.last.Error != "" {
		msg += ": " + e.last.Error
	}
	return msg + " (--timeout to wait longer)"
}

// RemoteCode makes the remote API answer timeout.
func (e *restartTimeoutError) RemoteCode() remote.Code { return remote.CodeTimeout }

// exposeHostAPI exposes the host's methods on its root: for the commands of other
// processes (see runningHost) on a long-running host, and for this process's own commands
// (remote.Local), which call them the same way.
func (a *invocation) exposeHostAPI(h *host) error {
	for _, expose := range []func() (ctx.Disposer, error){
		func() (ctx.Disposer, error) {
			return ctx.ExposeRemote(h.root, methodHostInfo, func(context.Context, struct{}) (hostInfo, error) {
				return hostInfo{PID: os.Getpid(), Profile: h.profile.Name, Source: h.profile.Source}, nil
			})
		},
		func() (ctx.Disposer, error) {
			return ctx.ExposeRemote(h.root, methodHostList, func(cx context.Context, _ struct{}) (hostList, error) {
				return h.serverList(), nil
			})
		},
		func() (ctx.Disposer, error) {
			return ctx.ExposeRemote(h.root, methodHostProbe, func(cx context.Context, p mcpmanager.NameParams) (mcpmanager.ProbeResult, error) {
				return h.probe(cx, p.Name, a.logger)
			})
		},
		func() (ctx.Disposer, error) {
			return ctx.ExposeRemoteStream(h.root, methodHostExec, func(cx context.Context, p execParams, send func(execEvent) error) error {
				return a.execOnHost(cx, h, p, send)
			})
		},
		func() (ctx.Disposer, error) {
			return ctx.ExposeRemoteStream(h.root, methodHostRestart, func(cx context.Context, p restartParams, send func(restartEvent) error) error {
				timeout := defaultRestartTimeout
				if p.TimeoutMs > 0 {
					timeout = time.Duration(p.TimeoutMs) * time.Millisecond
				}
				v, err := h.restart(cx, p.Name, timeout, func(v mcpmanager.View) { _ = send(restartEvent{Server: v}) })
				if err != nil {
					return err
				}
				return send(restartEvent{Server: v, Done: true})
			})
		},
	} {
		if _, err := expose(); err != nil {
			return err
		}
	}
	return nil
}

// serverList is what mcp list shows: the manager's snapshot (if the profile has a manager)
// with the profile's own client rows as Unmanaged, or the clients alone.
func (h *host) serverList() hostList {
	clients := clientList(h)
	m, ok := mcpmanager.Key.Get(h.root)
	if !ok || m == nil {
		return hostList{Snapshot: mcpmanager.Snapshot{Servers: clients}}
	}
	return hostList{Snapshot: m.Snapshot(), Unmanaged: clients}
}

// names returns the server names of a server list.
func (l hostList) names() []string {
	var out []string
	for _, s := range append(slices.Clone(l.Servers), l.Unmanaged...) {
		out = append(out, s.Name)
	}
	return out
}

func (h *host) unknown(name string) error {
	return &unknownServerError{name: name, where: fmt.Sprintf("in profile %q", h.profile.Source), known: h.serverList().names()}
}

// client returns the scope and last report of the profile's own client (one the manager
// did not mount) called name.
func (h *host) client(name string) (mcpclient.Status, bool) {
	for _, st := range h.board.statuses() {
		if !managed(st) && st.Server == name {
			return st, true
		}
	}
	return mcpclient.Status{}, false
}

// probe probes the server called name: the manager's, else the profile's own client's
// configuration, afresh, without touching the live client.
func (h *host) probe(cx context.Context, name string, log *slog.Logger) (mcpmanager.ProbeResult, error) {
	if m, ok := mcpmanager.Key.Get(h.root); ok && m != nil {
		out, err := m.Probe(cx, name, mcpmanager.ProbeOptions{})
		if err == nil || !errors.Is(err, mcpmanager.ErrNotFound) {
			return out, err
		}
	}
	st, found := h.client(name)
	cfg, isClient := mcpclient.Config{}, false
	if found {
		cfg, isClient = mcpclient.Plugin.Config(st.Scope)
	}
	if !isClient {
		return mcpmanager.ProbeResult{}, h.unknown(name)
	}
	return probeOnly(cx, name, cfg, log), nil
}

// probeOnly probes cfg, a profile's own client configuration (no manager's entry), as the
// manager's probe result of name.
func probeOnly(cx context.Context, name string, cfg mcpclient.Config, log *slog.Logger) mcpmanager.ProbeResult {
	return mcpmanager.ProbeResult{Name: name, Source: sourceProfile, ProbeResult: mcpclient.Probe(cx, cfg, mcpclient.ProbeOptions{Logger: log})}
}

// sourceProfile is the Source of the views and probe results of the profile's own client
// rows (the manager's are settings or registered).
const sourceProfile mcpmanager.Source = "profile"

// restart restarts the server called name — the manager's, else the profile's own
// client — and waits, at most timeout, until it has connected or failed, calling progress
// with every status it passes through. A server that did neither in time is a
// *restartTimeoutError carrying its last status.
func (h *host) restart(pcx context.Context, name string, timeout time.Duration, progress func(mcpmanager.View)) (mcpmanager.View, error) {
	cx, cancel := context.WithTimeout(pcx, timeout)
	defer cancel()
	if m, ok := mcpmanager.Key.Get(h.root); ok && m != nil {
		err := m.Restart(cx, name)
		if err == nil {
			return awaitManaged(cx, m, name, timeout, progress)
		}
		if !errors.Is(err, mcpmanager.ErrNotFound) {
			return mcpmanager.View{}, err
		}
	}
	st, found := h.client(name)
	if !found {
		return mcpmanager.View{}, h.unknown(name)
	}
	// Restarting the scope disconnects (ending a stdio server's process group), connects
	// afresh and waits for the first discovery.
	if err := st.Scope.Restart(cx); err != nil {
		return mcpmanager.View{}, fmt.Errorf("restarting %s: %w", name, err)
	}
	return h.board.await(cx, st.Scope, timeout, progress)
}

// finalManaged reports whether a managed server's state ends a restart's wait: a server
// that needs a login waits for one, so the restart answers at once with the hint.
func finalManaged(s mcpmanager.State) bool {
	switch s {
	case mcpmanager.StateConnected, mcpmanager.StateFailed, mcpmanager.StateCleanupIncomplete, mcpmanager.StateDisabled,
		mcpmanager.StateLazy, mcpmanager.StateIdle, mcpmanager.StateNeedsAuth:
		return true
	}
	return false
}

// awaitManaged follows the manager's view of name until it is final (see finalManaged).
func awaitManaged(cx context.Context, m *mcpmanager.Manager, name string, timeout time.Duration, progress func(mcpmanager.View)) (mcpmanager.View, error) {
	var last mcpmanager.View
	shown := ""
	for snap := range m.Watch(cx) {
		var v *mcpmanager.View
		for i := range snap.Servers {
			if snap.Servers[i].Name == name && !snap.Servers[i].Removed {
				v = &snap.Servers[i]
			}
		}
		if v == nil {
			return last, fmt.Errorf("mcp server %q went away during the restart", name)
		}
		last = *v
		if line := statusLine(viewStatus(mcpmanager.StatusChange{Name: name, Status: *v})); line != shown {
			shown = line
			progress(*v)
		}
		if finalManaged(v.Status) {
			return *v, nil
		}
	}
	if cx.Err() != nil {
		return last, &restartTimeoutError{name: name, timeout: timeout, last: last}
	}
	return last, errors.New("the MCP server manager stopped during the restart")
}

// clientView is the view of a profile's own client (one the manager did not mount) from its
// last report: the fields of a manager's view that a report has, so that both read alike.
// Its configuration is redacted.
func clientView(st mcpclient.Status) mcpmanager.View {
	v := mcpmanager.View{
		Name: st.Server, Source: sourceProfile, Enabled: true, Transport: st.Transport,
		Status: mcpmanager.State(st.Phase), Error: st.Err, Attempt: st.Attempt, MaxAttempts: st.MaxAttempts,
		ProtocolVersion: st.ProtocolVersion, Tools: st.Tools, InstructionBytes: st.InstructionBytes, StderrTail: st.StderrTail,
	}
	if st.ServerName != "" {
		v.ServerInfo = &mcpmanager.ServerInfo{Name: st.ServerName, Version: st.ServerVersion}
	}
	if st.Scope != nil {
		if cfg, ok := mcpclient.Plugin.Config(st.Scope); ok {
			if v.Transport == "" {
				v.Transport = cfg.Transport
			}
			v.Config = cfg.Redacted()
		}
	}
	if v.Tools == nil {
		v.Tools = []string{}
	}
	return v
}
