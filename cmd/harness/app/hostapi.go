package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpmanager"
)

// The host's own remote methods, exposed by a long-running host (run) next to the
// manager's: they answer for every MCP server of the host, the manager's and the profile's
// own client rows alike, exactly as the same command answers in process.
const (
	methodHostInfo    = "harness/host"       // hostInfo
	methodHostList    = "harness/mcpList"    // the list mcp list prints
	methodHostProbe   = "harness/mcpProbe"   // probeOutcome; params {"name"}
	methodHostRestart = "harness/mcpRestart" // stream of restartEvent; params restartParams
)

// defaultRestartTimeout bounds mcp restart's wait for the outcome.
const defaultRestartTimeout = 30 * time.Second

// hostInfo is the answer of harness/host: which process and profile a host is.
type hostInfo struct {
	PID     int    `json:"pid"`
	Profile string `json:"profile"`
	Source  string `json:"source"`
}

// restartParams are the parameters of harness/mcpRestart.
type restartParams struct {
	Name      string `json:"name"`
	TimeoutMs int64  `json:"timeoutMs,omitempty"`
}

// restartEvent is one value of the harness/mcpRestart stream: the server's status as it
// changes, the last one with Done set.
type restartEvent struct {
	Server serverView `json:"server"`
	Done   bool       `json:"done,omitempty"`
}

// restartTimeoutError is a restart whose server neither connected nor failed in time.
type restartTimeoutError struct {
	name    string
	timeout time.Duration
	last    serverView
}

func (e *restartTimeoutError) Error() string {
	msg := fmt.Sprintf("mcp server %q restarted but is still %s after %v", e.name, e.last.Status, e.timeout)
	if e.last.Error != "" {
		msg += ": " + e.last.Error
	}
	return msg + " (--timeout to wait longer)"
}

// RemoteCode makes the remote API answer timeout.
func (e *restartTimeoutError) RemoteCode() string { return "timeout" }

// exposeHostAPI exposes the host's methods on its root, for the commands of other
// processes (see runningHost).
func (a *invocation) exposeHostAPI(h *host) error {
	methods := []ctx.RemoteMethod{
		{Name: methodHostInfo, Call: func(context.Context, json.RawMessage) (any, error) {
			return hostInfo{PID: os.Getpid(), Profile: h.profile.Name, Source: h.profile.Source}, nil
		}},
		{Name: methodHostList, Call: func(c context.Context, _ json.RawMessage) (any, error) {
			return h.serverList(c)
		}},
		{Name: methodHostProbe, Call: func(c context.Context, raw json.RawMessage) (any, error) {
			var p restartParams
			if err := json.Unmarshal(raw, &p); err != nil || p.Name == "" {
				return nil, &codedError{"bad_request", `parameters: expected {"name": NAME}`}
			}
			return h.probe(c, p.Name, a.logger)
		}},
		{Name: methodHostExec, Stream: func(c context.Context, raw json.RawMessage, send func(any) error) error {
			return a.execOnHost(c, h, raw, send)
		}},
		{Name: methodHostRestart, Stream: func(c context.Context, raw json.RawMessage, send func(any) error) error {
			var p restartParams
			if err := json.Unmarshal(raw, &p); err != nil || p.Name == "" || p.TimeoutMs < 0 {
				return &codedError{"bad_request", `parameters: expected {"name": NAME, "timeoutMs": N}`}
			}
			timeout := defaultRestartTimeout
			if p.TimeoutMs > 0 {
				timeout = time.Duration(p.TimeoutMs) * time.Millisecond
			}
			v, err := h.restart(c, p.Name, timeout, func(v serverView) { _ = send(restartEvent{Server: v}) })
			if err != nil {
				return err
			}
			return send(restartEvent{Server: v, Done: true})
		}},
	}
	for _, m := range methods {
		if _, err := h.root.ExposeRemote(m); err != nil {
			return err
		}
	}
	return nil
}

// codedError is an error with a remote code.
type codedError struct{ code, msg string }

func (e *codedError) Error() string      { return e.msg }
func (e *codedError) RemoteCode() string { return e.code }

// serverList is what mcp list shows: the manager's answer (if the profile has a manager)
// with the profile's own client rows under "unmanaged", or the clients alone.
func (h *host) serverList(c context.Context) (json.RawMessage, error) {
	var raw json.RawMessage
	ok, err := callLocal(c, h.root, methodList, "", &raw)
	if err != nil {
		return nil, err
	}
	clients := clientList(h)
	switch {
	case !ok:
		return json.Marshal(clients)
	case len(clients.Servers) > 0:
		return withUnmanaged(raw, clients.Servers)
	}
	return raw, nil
}

// names lists every server name of the host.
func (h *host) names(c context.Context) []string {
	raw, err := h.serverList(c)
	if err != nil {
		return nil
	}
	return listNames(raw)
}

// listNames returns the server names of a server list.
func listNames(raw json.RawMessage) []string {
	var l serverList
	if json.Unmarshal(raw, &l) != nil {
		return nil
	}
	var out []string
	for _, s := range append(l.Servers, l.Unmanaged...) {
		out = append(out, s.Name)
	}
	return out
}

func (h *host) unknown(c context.Context, name string) error {
	return &unknownServerError{name: name, where: fmt.Sprintf("in profile %q", h.profile.Source), known: h.names(c)}
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
func (h *host) probe(c context.Context, name string, log *slog.Logger) (probeOutcome, error) {
	var out probeOutcome
	ok, err := callLocal(c, h.root, methodProbe, name, &out)
	if ok && (err == nil || !errors.Is(err, mcpmanager.ErrNotFound)) {
		return out, err
	}
	st, found := h.client(name)
	cfg, isClient := mcpclient.Config{}, false
	if found {
		cfg, isClient = mcpclient.Plugin.Config(st.Scope)
	}
	if !isClient {
		return out, h.unknown(c, name)
	}
	return probeOutcome{Name: name, ProbeResult: mcpclient.Probe(c, cfg, mcpclient.ProbeOptions{Logger: log})}, nil
}

// restart restarts the server called name — the manager's, else the profile's own
// client — and waits, at most timeout, until it has connected or failed, calling progress
// with every status it passes through. A server that did neither in time is a
// *restartTimeoutError carrying its last status.
func (h *host) restart(c context.Context, name string, timeout time.Duration, progress func(serverView)) (serverView, error) {
	cx, cancel := context.WithTimeout(c, timeout)
	defer cancel()
	if m, ok := mcpmanager.Key.Get(h.root); ok && m != nil {
		err := m.Restart(cx, name)
		if err == nil {
			return awaitManaged(cx, m, name, timeout, progress)
		}
		if !errors.Is(err, mcpmanager.ErrNotFound) {
			return serverView{}, err
		}
	}
	st, found := h.client(name)
	if !found {
		return serverView{}, h.unknown(c, name)
	}
	// Restarting the scope disconnects (ending a stdio server's process group), connects
	// afresh and waits for the first discovery.
	if err := st.Scope.Restart(cx); err != nil {
		return serverView{}, fmt.Errorf("restarting %s: %w", name, err)
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
func awaitManaged(cx context.Context, m *mcpmanager.Manager, name string, timeout time.Duration, progress func(serverView)) (serverView, error) {
	var last serverView
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
		sv, err := managerServerView(*v)
		if err != nil {
			return last, err
		}
		last = sv
		if line := statusLine(viewStatus(mcpmanager.StatusChange{Name: name, Status: *v})); line != shown {
			shown = line
			progress(sv)
		}
		if finalManaged(v.Status) {
			return sv, nil
		}
	}
	if cx.Err() != nil {
		return last, &restartTimeoutError{name: name, timeout: timeout, last: last}
	}
	return last, errors.New("the MCP server manager stopped during the restart")
}

// managerServerView is the serverView of a manager's view.
func managerServerView(v mcpmanager.View) (serverView, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return serverView{}, err
	}
	var sv serverView
	err = json.Unmarshal(b, &sv)
	return sv, err
}

// clientServerView is the serverView of a client's report.
func clientServerView(st mcpclient.Status) serverView {
	v := serverView{
		Name: st.Server, Status: string(st.Phase), Transport: st.Transport, Error: st.Err,
		Attempt: st.Attempt, MaxAttempts: st.MaxAttempts, Tools: st.Tools, StderrTail: st.StderrTail,
	}
	if st.Scope != nil {
		if cfg, ok := mcpclient.Plugin.Config(st.Scope); ok {
			if v.Transport == "" {
				v.Transport = cfg.Transport
			}
			v.Config, _ = json.Marshal(cfg.Redacted())
		}
	}
	if v.Tools == nil {
		v.Tools = []string{}
	}
	return v
}
