package host

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

// The host's own remote methods (ExposeAPI), next to the manager's: they answer for every
// MCP server of the host, the manager's and the profile's own client rows alike. Each is
// declared once here with its parameters and answer, and clients call it through the same
// value, over the remote API of a running host or in process (remote.Local).
var (
	// MethodInfo answers which process and profile the host is.
	MethodInfo = remote.NewMethod[struct{}, Info]("harness/host")
	// MethodList answers the host's servers.
	MethodList = remote.NewMethod[struct{}, ServerList]("harness/mcpList")
	// MethodProbe probes one server afresh.
	MethodProbe = remote.NewMethod[mcpmanager.NameParams, mcpmanager.ProbeResult]("harness/mcpProbe")
	// MethodRestart restarts one server and streams its status until the outcome.
	MethodRestart = remote.NewStreamMethod[RestartParams, RestartEvent]("harness/mcpRestart")
	// MethodClients streams the profile's own MCP clients (the rows the manager does not
	// list), again after every status report, for the management page. Mount exposes it.
	MethodClients = remote.NewStreamMethod[struct{}, []mcpmanager.View]("harness/clients")
)

// DefaultRestartTimeout bounds a restart's wait for the outcome when RestartParams gives
// none.
const DefaultRestartTimeout = 30 * time.Second

// Info is the answer of MethodInfo: which process and profile a host is.
type Info struct {
	PID     int    `json:"pid"`
	Profile string `json:"profile"`
	Source  string `json:"source"`
	// AgentProblem says which agent row, or subagent's, failed to mount ("" when none
	// did): ask and chat refuse such a host's agent as they refuse the profile in process
	// ([StartedAgent]), since its main agent would run without the subagent's tool.
	AgentProblem string `json:"agentProblem,omitempty"`
}

// ServerList is the answer of MethodList: the manager's snapshot (if the profile has a
// manager; else only its servers, the profile's clients) and, next to a manager's servers,
// the profile's own client rows, which a manager does not list. A client row is a manager's
// view with Source SourceProfile.
type ServerList struct {
	mcpmanager.Snapshot
	Unmanaged []mcpmanager.View `json:"unmanaged,omitempty"`
}

// Names returns the server names of a server list.
func (l ServerList) Names() []string {
	var out []string
	for _, s := range append(slices.Clone(l.Servers), l.Unmanaged...) {
		out = append(out, s.Name)
	}
	return out
}

// RestartParams are the parameters of MethodRestart.
type RestartParams struct {
	Name      string `json:"name"`
	TimeoutMs int64  `json:"timeoutMs,omitempty"`
}

// Validate requires a name and a timeout that is not negative.
func (p RestartParams) Validate() error {
	var probs ctx.Problems
	probs.Require("name", p.Name, "the server's name")
	if p.TimeoutMs < 0 {
		probs.Add("timeoutMs", "expected a number of milliseconds ≥ 0")
	}
	return probs.Err()
}

// RestartEvent is one value of the MethodRestart stream: the server's status as it
// changes, the last one with Done set.
type RestartEvent struct {
	Server mcpmanager.View `json:"server"`
	Done   bool            `json:"done,omitempty"`
}

// ExposeAPI exposes the host's methods (MethodInfo, MethodList, MethodProbe,
// MethodRestart, and those that answer for the root: MethodTools, MethodCallTool,
// MethodPrompt, MethodResourceServers, MethodWatchResources) on its root: for other
// processes on a hosting host's remote API, and for callers in this process
// (remote.Local), which call them the same way. They go with the root.
func (h *Host) ExposeAPI() error {
	for _, expose := range append(h.rootMethods(), []func() (ctx.Disposer, error){
		func() (ctx.Disposer, error) {
			return MethodInfo.Expose(h.root, func(context.Context, struct{}) (Info, error) {
				info := Info{PID: os.Getpid(), Profile: h.profile.Name, Source: h.profile.Source}
				if err := h.FailedUse(UseAgent); err != nil {
					info.AgentProblem = err.Error()
				}
				return info, nil
			})
		},
		func() (ctx.Disposer, error) {
			return MethodList.Expose(h.root, func(cx context.Context, _ struct{}) (ServerList, error) {
				return h.ServerList(), nil
			})
		},
		func() (ctx.Disposer, error) {
			return MethodProbe.Expose(h.root, func(cx context.Context, p mcpmanager.NameParams) (mcpmanager.ProbeResult, error) {
				return h.Probe(cx, p.Name)
			})
		},
		func() (ctx.Disposer, error) {
			return MethodRestart.Expose(h.root, func(cx context.Context, p RestartParams, send func(RestartEvent) error) error {
				timeout := DefaultRestartTimeout
				if p.TimeoutMs > 0 {
					timeout = time.Duration(p.TimeoutMs) * time.Millisecond
				}
				v, err := h.Restart(cx, p.Name, timeout, func(v mcpmanager.View) { _ = send(RestartEvent{Server: v}) })
				if err != nil {
					return err
				}
				return send(RestartEvent{Server: v, Done: true})
			})
		},
	}...) {
		if _, err := expose(); err != nil {
			return err
		}
	}
	return nil
}

// ServerList is what MethodList answers: the manager's snapshot (if the profile has a
// manager) with the profile's own client rows as Unmanaged, or the clients alone.
func (h *Host) ServerList() ServerList {
	clients := h.clientList()
	m, ok := mcpmanager.Key.Get(h.root)
	if !ok || m == nil {
		return ServerList{Snapshot: mcpmanager.Snapshot{Servers: clients}}
	}
	return ServerList{Snapshot: m.Snapshot(), Unmanaged: clients}
}

// UnknownServer is the *UnknownServerError of name in the host's profile, listing the
// servers the host has.
func (h *Host) UnknownServer(name string) error {
	return &UnknownServerError{Name: name, Where: fmt.Sprintf("in profile %q", h.profile.Source), Known: h.ServerList().Names()}
}

// client returns the last report of the profile's own client (one the manager did not
// mount) called name.
func (h *Host) client(name string) (mcpclient.Status, bool) {
	for _, st := range h.board.Statuses() {
		if !Managed(st) && st.Server == name {
			return st, true
		}
	}
	return mcpclient.Status{}, false
}

// Probe probes the server called name: the manager's, else the profile's own client's
// configuration, afresh, without touching the live client. A name the host does not have
// is an *UnknownServerError.
func (h *Host) Probe(cx context.Context, name string) (mcpmanager.ProbeResult, error) {
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
		return mcpmanager.ProbeResult{}, h.UnknownServer(name)
	}
	return ProbeConfig(cx, name, cfg, h.logger), nil
}

// ProbeConfig probes cfg, a profile's own client configuration (no manager's entry), as
// the manager's probe result of name, logging to log.
func ProbeConfig(cx context.Context, name string, cfg mcpclient.Config, log *slog.Logger) mcpmanager.ProbeResult {
	return mcpmanager.ProbeResult{Name: name, Source: SourceProfile, ProbeResult: mcpclient.Probe(cx, cfg, mcpclient.ProbeOptions{Logger: log})}
}

// Restart restarts the server called name — the manager's, else the profile's own
// client — and waits, at most timeout, until it has connected or failed, calling progress
// with every status it passes through (progress must be quick). A server that did neither
// in time is a *RestartTimeoutError carrying its last status; a name the host does not
// have is an *UnknownServerError.
func (h *Host) Restart(pcx context.Context, name string, timeout time.Duration, progress func(mcpmanager.View)) (mcpmanager.View, error) {
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
		return mcpmanager.View{}, h.UnknownServer(name)
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
		if line := StatusLine(ViewStatus(mcpmanager.StatusChange{Name: name, Status: *v})); line != shown {
			shown = line
			progress(*v)
		}
		if finalManaged(v.Status) {
			return *v, nil
		}
	}
	if cx.Err() != nil {
		return last, &RestartTimeoutError{Name: name, Timeout: timeout, Last: last}
	}
	return last, errors.New("the MCP server manager stopped during the restart")
}
