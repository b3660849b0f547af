package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpmanager"
	"github.com/cordisgo/harness/plugins/remote"
	"github.com/cordisgo/harness/profiles"
)

// Remote methods of the MCP server manager (plugins/mcpmanager). The mcp
// commands call them on a running host through the remote API; a manager
// mounted in process answers through its Go API, encoded the same way, so
// both print the same thing.
const (
	methodList    = "mcpManager/list"
	methodRestart = "mcpManager/restart"
	methodProbe   = "mcpManager/probe"
)

// hostAnswerTimeout bounds the check that the host named by an endpoint
// file is running.
const hostAnswerTimeout = 3 * time.Second

// mcpFlags are the flags of mcp list, probe and restart.
type mcpFlags struct {
	endpoint string // --endpoint: the running host's endpoint file
	local    bool   // --local: never use a running host
	asJSON   bool
}

// serverView is one server as mcp list shows it: the fields of the
// manager's view that the table uses (the manager's JSON is printed whole
// with --json), or a client's last status report when no manager runs.
type serverView struct {
	Name        string          `json:"name"`
	Status      string          `json:"status"`
	Transport   string          `json:"transport,omitempty"`
	Error       string          `json:"error,omitempty"`
	Attempt     int             `json:"attempt,omitempty"`
	MaxAttempts int             `json:"maxAttempts,omitempty"`
	Tools       []string        `json:"tools"`
	StderrTail  string          `json:"stderrTail,omitempty"`
	Config      json.RawMessage `json:"config,omitempty"`
}

// serverList is the answer of mcpManager/list (the part mcp list reads),
// and the JSON mcp list prints without a manager.
type serverList struct {
	Servers []serverView `json:"servers"`
	// Unmanaged are the MCP client rows of the profile itself, listed in
	// process next to a manager's servers (a manager lists only its own).
	Unmanaged []serverView `json:"unmanaged,omitempty"`
}

// probeOutcome is the answer of mcpManager/probe, and what mcp probe
// prints without a manager.
type probeOutcome struct {
	Name string `json:"name"`
	mcpclient.ProbeResult
}

func (a *invocation) mcpManageCommands() []*cobra.Command {
	var f mcpFlags
	list := &cobra.Command{
		Use:   "list",
		Short: "List the MCP servers and their status (a running host's, or the profile's in process)",
		Args:  args(cobra.NoArgs),
		RunE: action(func(cmd *cobra.Command, _ []string) error {
			return a.mcpList(cmd.Context(), f)
		}),
	}
	probe := &cobra.Command{
		Use:   "probe NAME",
		Short: "Connect to one MCP server afresh, list its tools and disconnect, without touching the live client",
		Args:  args(cobra.ExactArgs(1)),
		RunE: action(func(cmd *cobra.Command, argv []string) error {
			return a.mcpProbe(cmd.Context(), f, argv[0])
		}),
	}
	restart := &cobra.Command{
		Use:   "restart NAME",
		Short: "Restart one MCP server: a new connection (and process) with a fresh reconnect budget",
		Args:  args(cobra.ExactArgs(1)),
		RunE: action(func(cmd *cobra.Command, argv []string) error {
			return a.mcpRestart(cmd.Context(), f, argv[0])
		}),
	}
	cmds := []*cobra.Command{list, probe, restart}
	for _, c := range cmds {
		fl := c.Flags()
		fl.StringVar(&f.endpoint, "endpoint", "", "the running host's endpoint `FILE` (default: the remote plugin's default endpoint file)")
		fl.BoolVar(&f.local, "local", false, "do not look for a running host: mount the profile in this process")
		fl.BoolVar(&f.asJSON, "json", false, "print the answer as JSON")
	}
	return cmds
}

// runningHost returns a client for the running host that the endpoint
// file names and that answers, or nil when there is none (no endpoint
// file, or a stale one: then a note says so on stderr).
func (a *invocation) runningHost(c context.Context, f mcpFlags) *remote.Client {
	if f.local {
		return nil
	}
	cl, err := remote.Discover(f.endpoint)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			errorf(a.stderr, a.prog, "ignoring the endpoint file: %v; working in process", err)
		}
		return nil
	}
	cx, cancel := context.WithTimeout(c, hostAnswerTimeout)
	defer cancel()
	if _, err := cl.Methods(cx); err != nil {
		errorf(a.stderr, a.prog, "no running host answers at %s (%v); working in process", cl.BaseURL, err)
		return nil
	}
	return cl
}

// callHost calls a manager method on a running host, and reports a host
// without a manager as such.
func callHost(c context.Context, cl *remote.Client, method string, params, result any) error {
	return hostError(cl, method, cl.Call(c, method, params, result))
}

// callLocal answers a manager method with the manager mounted in process
// (plugins/mcpmanager's Go API), if there is one (ok false otherwise),
// encoding the answer as the remote API would, into result.
func callLocal(c context.Context, root *ctx.Context, method string, name string, result any) (ok bool, err error) {
	m, found := mcpmanager.Key.Get(root)
	if !found || m == nil {
		return false, nil
	}
	var v any
	switch method {
	case methodList:
		v = m.Snapshot()
	case methodProbe:
		v, err = m.Probe(c, name, mcpmanager.ProbeOptions{})
	case methodRestart:
		if err = m.Restart(c, name); err == nil {
			err = fmt.Errorf("mcp server %q went away during the restart", name)
			for _, view := range m.List() {
				if view.Name == name && !view.Removed {
					v, err = mcpmanager.RestartResult{Server: view}, nil
				}
			}
		}
	default:
		return true, fmt.Errorf("unknown manager method %s", method)
	}
	if err != nil {
		return true, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return true, err
	}
	return true, json.Unmarshal(b, result)
}

func (a *invocation) mcpList(c context.Context, f mcpFlags) error {
	var raw json.RawMessage
	if cl := a.runningHost(c, f); cl != nil {
		if err := callHost(c, cl, methodList, nil, &raw); err != nil {
			return err
		}
		return a.printList(raw, f.asJSON)
	}
	a.quietStartup = true // the list shows every status
	return a.withHost(c, func(c context.Context, h *host) error {
		ok, err := callLocal(c, h.root, methodList, "", &raw)
		if err != nil {
			return err
		}
		clients := clientList(h)
		switch {
		case !ok:
			raw, err = json.Marshal(clients)
		case len(clients.Servers) > 0:
			raw, err = withUnmanaged(raw, clients.Servers)
		}
		if err != nil {
			return err
		}
		return a.printList(raw, f.asJSON)
	})
}

// withUnmanaged adds the unmanaged clients to a manager's list, as the
// key "unmanaged", keeping every key of the manager's answer.
func withUnmanaged(managerList json.RawMessage, unmanaged []serverView) (json.RawMessage, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(managerList, &keys); err != nil {
		return nil, fmt.Errorf("reading the manager's server list: %w", err)
	}
	b, err := json.Marshal(unmanaged)
	if err != nil {
		return nil, err
	}
	keys["unmanaged"] = b
	return json.Marshal(keys)
}

// clientList lists the MCP clients of the tree that the manager (if any)
// did not mount: every such client's last status report, then the clients
// whose scope failed before reporting (an invalid or duplicate server
// name, say).
func clientList(h *host) serverList {
	out := serverList{Servers: []serverView{}}
	seen := map[*ctx.Scope]bool{}
	for _, st := range h.board.statuses() {
		seen[st.Scope] = true
		if managed(st) {
			continue
		}
		v := serverView{
			Name: st.Server, Status: string(st.Phase), Transport: st.Transport, Error: st.Err,
			Attempt: st.Attempt, MaxAttempts: st.MaxAttempts, Tools: st.Tools, StderrTail: st.StderrTail,
		}
		if cfg, ok := mcpclient.Plugin.Config(st.Scope); ok {
			if v.Transport == "" {
				v.Transport = cfg.Transport
			}
			v.Config, _ = json.Marshal(cfg.Redacted())
		}
		if v.Tools == nil {
			v.Tools = []string{}
		}
		out.Servers = append(out.Servers, v)
	}
	h.mounts.mu.Lock()
	defer h.mounts.mu.Unlock()
	for _, path := range h.mounts.order {
		s := h.mounts.scopes[path]
		if seen[s] || s.Def() == nil || s.Def().Name() != mcpclientUse || s.State() != ctx.Failed {
			continue
		}
		v := serverView{Name: path, Status: string(mcpclient.PhaseFailed), Tools: []string{}}
		if s.Err() != nil {
			v.Error = s.Err().Error()
		}
		out.Servers = append(out.Servers, v)
	}
	return out
}

// printList prints a server list: as JSON unchanged, or as a table.
func (a *invocation) printList(raw json.RawMessage, asJSON bool) error {
	var l serverList
	if err := json.Unmarshal(raw, &l); err != nil {
		return fmt.Errorf("reading the server list: %w", err)
	}
	if asJSON {
		return writeJSON(a, raw)
	}
	servers := append(l.Servers, l.Unmanaged...)
	if len(servers) == 0 {
		fmt.Fprintln(a.stderr, "no MCP servers")
		return nil
	}
	rows := [][]string{{"NAME", "STATUS", "TRANSPORT", "TOOLS", "DETAIL"}}
	for _, s := range servers {
		detail := strings.TrimPrefix(s.Error, fmt.Sprintf("mcp server %q: ", s.Name))
		if s.Attempt > 0 && s.MaxAttempts > 0 && s.Status != string(mcpclient.PhaseConnected) {
			detail = fmt.Sprintf("attempt %d of %d: %s", s.Attempt, s.MaxAttempts, detail)
		}
		if tail := lastLine(s.StderrTail); tail != "" && s.Status != string(mcpclient.PhaseConnected) {
			detail += " (stderr: " + tail + ")"
		}
		rows = append(rows, []string{s.Name, s.Status, dash(s.Transport), strconv.Itoa(len(s.Tools)), joinLines(detail)})
	}
	return a.printTable(rows)
}

// printTable prints rows (the first is the header) as a table on stdout, every cell
// whole: the last column is wrapped to the terminal's width (see outputWidth), its
// continuation lines indented under it; off a terminal lines are not wrapped.
func (a *invocation) printTable(rows [][]string) error {
	const pad = 2
	width := a.outputWidth(a.stdout)
	offset := 0
	if len(rows) > 0 {
		for col := 0; col < len(rows[0])-1; col++ {
			w := 0
			for _, r := range rows {
				w = max(w, utf8.RuneCountInString(r[col]))
			}
			offset += w + pad
		}
	}
	lastWidth := 0
	if width > 0 {
		lastWidth = max(width-offset, 24) // narrower than that is not readable: let the terminal wrap
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, pad, ' ', 0)
	for _, r := range rows {
		n := len(r) - 1
		lines := wrapWords(r[n], lastWidth)
		fmt.Fprintf(tw, "%s\t%s\n", strings.Join(r[:n], "\t"), lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(tw, "%s%s\n", strings.Repeat("\t", n), l)
		}
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (a *invocation) mcpProbe(c context.Context, f mcpFlags, name string) error {
	var out probeOutcome
	params := map[string]any{"name": name}
	if cl := a.runningHost(c, f); cl != nil {
		if err := callHost(c, cl, methodProbe, params, &out); err != nil {
			return err
		}
		return a.printProbe(out, f.asJSON)
	}
	p, err := a.loadProfile()
	if err != nil {
		return err
	}
	if mountsUse(p.Rows, managerUse) {
		// The manager resolves its entries (templates, credentials): mount
		// the profile and ask it.
		return a.withHost(c, func(c context.Context, h *host) error {
			ok, err := callLocal(c, h.root, methodProbe, name, &out)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("the MCP server manager of profile %q is not running", h.profile.Source)
			}
			return a.printProbe(out, f.asJSON)
		})
	}
	// No manager: probe the configuration of the profile's row, without
	// mounting anything.
	cfg, err := a.serverConfig(p, name)
	if err != nil {
		return err
	}
	out = probeOutcome{Name: name, ProbeResult: mcpclient.Probe(c, cfg, mcpclient.ProbeOptions{Logger: a.logger})}
	return a.printProbe(out, f.asJSON)
}

// serverConfig returns the decoded configuration of the profile's enabled
// mcpclient row, at any depth, whose serverName is name.
func (a *invocation) serverConfig(p *profiles.Profile, name string) (mcpclient.Config, error) {
	var names []string
	var found *mcpclient.Config
	var walk func(rows []profiles.Row) error
	walk = func(rows []profiles.Row) error {
		for _, r := range rows {
			if !r.Enabled {
				continue
			}
			if r.Use == mcpclientUse {
				v, err := a.catalog[mcpclientUse].DecodeConfig(r.Config)
				if err != nil {
					return err // loadProfile decoded it already
				}
				if cfg, ok := v.(mcpclient.Config); ok {
					names = append(names, cfg.ServerName)
					if cfg.ServerName == name && found == nil {
						found = &cfg
					}
				}
			}
			if err := walk(r.Rows); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(p.Rows); err != nil {
		return mcpclient.Config{}, err
	}
	if found == nil {
		return mcpclient.Config{}, noServer(p, name, names)
	}
	return *found, nil
}

func noServer(p *profiles.Profile, name string, names []string) error {
	if len(names) == 0 {
		return fmt.Errorf("no MCP server %q: profile %q has no MCP servers", name, p.Source)
	}
	slices.Sort(names)
	return fmt.Errorf("no MCP server %q in profile %q (servers: %s)", name, p.Source, strings.Join(names, ", "))
}

// printProbe prints a probe's outcome; a failed probe, or one whose
// connection could not be cleaned up, is a failure.
func (a *invocation) printProbe(out probeOutcome, asJSON bool) error {
	if asJSON {
		if err := writeJSON(a, out); err != nil {
			return err
		}
	} else {
		a.printProbeText(out)
	}
	switch {
	case !out.OK():
		if asJSON {
			return failure(fmt.Errorf("probe of %s failed at %s: %s", out.Name, out.Stage, out.Err))
		}
		return silentFailure
	case out.Cleanup.Outcome != "" && out.Cleanup.Outcome != mcpclient.CleanupClosed:
		return failure(fmt.Errorf("probe of %s: closing the connection: %s: %s", out.Name, out.Cleanup.Outcome, out.Cleanup.Err))
	}
	return nil
}

// printProbeText prints a probe's outcome for people: a summary line, the
// tools, and for a failure the error and the end of the server's stderr.
func (a *invocation) printProbeText(out probeOutcome) {
	total := out.Timings.Total.Round(time.Millisecond)
	if !out.OK() {
		fmt.Fprintf(a.stdout, "%s: failed at %s after %v: %s\n", out.Name, out.Stage, total,
			strings.TrimPrefix(joinLines(out.Err), fmt.Sprintf("mcp server %q: ", out.Name)))
		if tail := strings.TrimSpace(out.StderrTail); tail != "" {
			fmt.Fprintf(a.stdout, "stderr:\n%s\n", tail)
		}
		return
	}
	server := strings.TrimSpace(out.ServerName + " " + out.ServerVersion)
	fmt.Fprintf(a.stdout, "%s: ok in %v: %s over %s, protocol %s, %d tool%s", out.Name, total,
		dash(server), out.Transport, out.ProtocolVersion, len(out.Tools), plural(len(out.Tools)))
	if out.ToolsTruncated {
		fmt.Fprint(a.stdout, " (more not listed)")
	}
	if out.InstructionBytes > 0 {
		fmt.Fprintf(a.stdout, ", instructions (%d bytes)", out.InstructionBytes)
	}
	fmt.Fprintln(a.stdout)
	if len(out.Tools) == 0 {
		return
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tALLOWED\tDESCRIPTION")
	for _, t := range out.Tools {
		allowed := "yes"
		if !t.Allowed {
			allowed = "no"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, allowed, summary(t.Description, 72))
	}
	tw.Flush()
}

func (a *invocation) mcpRestart(c context.Context, f mcpFlags, name string) error {
	params := map[string]any{"name": name}
	var res struct {
		Server serverView `json:"server"`
	}
	var raw json.RawMessage
	print := func() error {
		if f.asJSON {
			return writeJSON(a, raw)
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return fmt.Errorf("reading the restart's answer: %w", err)
		}
		fmt.Fprintf(a.stdout, "%s: restarted; now %s\n", name, res.Server.Status)
		return nil
	}
	if cl := a.runningHost(c, f); cl != nil {
		if err := callHost(c, cl, methodRestart, params, &raw); err != nil {
			return err
		}
		return print()
	}
	a.quietStartup = true
	return a.withHost(c, func(c context.Context, h *host) error {
		// A client the manager did not mount: restart its scope, which
		// disconnects (and ends a stdio server's process group), connects
		// afresh and waits for the first discovery, then report its status.
		var target *ctx.Scope
		var names []string
		for _, st := range h.board.statuses() {
			if managed(st) {
				continue
			}
			names = append(names, st.Server)
			if st.Server == name && target == nil {
				target = st.Scope
			}
		}
		// The manager's servers come first; a name it does not know may be
		// one of the profile's own clients.
		ok, err := callLocal(c, h.root, methodRestart, name, &raw)
		if ok && (err == nil || target == nil || !errors.Is(err, mcpmanager.ErrNotFound)) {
			if err != nil {
				return err
			}
			return print()
		}
		if target == nil {
			return noServer(h.profile, name, names)
		}
		cx, cancel := context.WithTimeout(c, a.startupTimeout)
		defer cancel()
		if err := target.Restart(cx); err != nil {
			return fmt.Errorf("restarting %s: %w", name, err)
		}
		for _, st := range h.board.statuses() {
			if st.Scope == target {
				v := serverView{Name: name, Status: string(st.Phase), Transport: st.Transport, Error: st.Err, Tools: st.Tools}
				if v.Tools == nil {
					v.Tools = []string{}
				}
				if raw, err = json.Marshal(struct {
					Server serverView `json:"server"`
				}{v}); err != nil {
					return err
				}
				if err := print(); err != nil {
					return err
				}
				if st.Phase != mcpclient.PhaseConnected && !f.asJSON {
					errorf(a.stderr, a.prog, "mcp server %s", statusLine(st))
				}
				return nil
			}
		}
		return fmt.Errorf("restarting %s: no status reported", name)
	})
}
