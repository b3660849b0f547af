package host

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/agent"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/profiles"
)

// The agent commands' rows: a profile hosts an agent at its top level, its own or one with
// the defaults added, with programmatic tool calling when asked for. The agent's own
// sampling is offered to the MCP clients by Host.Mount (an agent row answers it).

// WithAgentRow returns rows with a top-level agent row (added when the profile has none)
// whose sessionsDir defaults to dir and whose permissions allow the patterns allow too.
func WithAgentRow(rows []profiles.Row, dir string, allow []string) []profiles.Row {
	out := append([]profiles.Row(nil), rows...)
	at := -1
	for i, r := range out {
		if r.Enabled && r.Use == UseAgent {
			at = i
			break
		}
	}
	if at < 0 {
		id := freeID(out, UseAgent)
		out = append(out, profiles.Row{ID: id, Use: UseAgent, Enabled: true, Config: map[string]any{}, Path: "plugins." + id})
		at = len(out) - 1
	}
	r := out[at]
	cfg := make(map[string]any, len(r.Config)+1)
	for k, v := range r.Config {
		cfg[k] = v
	}
	if _, ok := cfg["sessionsDir"]; !ok && dir != "" {
		cfg["sessionsDir"] = dir
	}
	if len(allow) > 0 {
		perms := map[string]any{}
		if p, ok := cfg["permissions"].(map[string]any); ok {
			for k, v := range p {
				perms[k] = v
			}
		}
		var list []any
		if l, ok := perms["allow"].([]any); ok {
			list = append(list, l...)
		}
		for _, p := range allow {
			list = append(list, p)
		}
		perms["allow"] = list
		cfg["permissions"] = perms
	}
	r.Config = cfg
	out[at] = r
	return out
}

// WithPTCRow returns rows with a top-level ptc row (the PTC service and its declarations
// section), added when the profile has none.
func WithPTCRow(rows []profiles.Row) []profiles.Row {
	for _, r := range rows {
		if r.Enabled && r.Use == UsePTC {
			return rows
		}
	}
	id := freeID(rows, UsePTC)
	return append(append([]profiles.Row(nil), rows...), profiles.Row{ID: id, Use: UsePTC, Enabled: true, Config: map[string]any{}, Path: "plugins." + id})
}

// freeID returns base, with '_' appended until no row of rows has that ID.
func freeID(rows []profiles.Row, base string) string {
	id := base
	for taken := true; taken; {
		taken = false
		for _, r := range rows {
			if strings.EqualFold(r.ID, id) {
				id += "_"
				taken = true
			}
		}
	}
	return id
}

// CheckModel reports whether the model name of rows' model service (its default for "")
// can answer, without a request: the profile's model row (use: model) is mounted alone, in
// a tree of its own, and asked ([model.Service.Check]: a missing API key, an unknown
// model). A command that needs the model calls it before the profile's servers start, so
// that it fails at once instead of after starting them. Rows without a model row, or one
// that does not mount, are nil: the host says why when it starts. The row's secrets are
// read as the client's are, from the default credentials file when no row of its own tree
// provides a credentials service.
func CheckModel(cx context.Context, rows []profiles.Row, catalog map[string]ctx.PluginDef, name string) error {
	for _, r := range rows {
		def, ok := catalog[r.Use]
		if !r.Enabled || r.Use != UseModel || !ok {
			continue
		}
		root := ctx.New(ctx.Options{Logger: slog.New(slog.DiscardHandler)})
		defer func() { _ = root.Scope().Dispose(context.WithoutCancel(cx)) }()
		sc, err := root.Plugin(def, r.Config)
		if err != nil || sc.Wait(cx) != nil {
			return nil
		}
		svc, ok := model.Key.Get(root)
		if !ok {
			return nil
		}
		return svc.Check(name)
	}
	return nil
}

// AgentModel is the model the main agent of rows uses: model when it is set (a command's
// --model), else the top-level agent row's, else "" (the model service's default).
func AgentModel(rows []profiles.Row, model string) string {
	if model != "" {
		return model
	}
	for _, r := range rows {
		if r.Enabled && r.Use == UseAgent {
			m, _ := r.Config["model"].(string)
			return m
		}
	}
	return ""
}

// SessionsDir is where the top-level agent of rows keeps its sessions: its row's
// sessionsDir, else dir (the default, as WithAgentRow gives it). An agent that keeps them
// in memory only ("-") has none on disk: dir then too.
func SessionsDir(rows []profiles.Row, dir string) string {
	for _, r := range rows {
		if r.Enabled && r.Use == UseAgent {
			if d, ok := r.Config["sessionsDir"].(string); ok && d != "" && d != "-" {
				return d
			}
			break
		}
	}
	return dir
}

// AgentMountError is the error of a profile whose agent, or one of its subagents, failed to
// mount: the profile's (a usage error), not the run's.
type AgentMountError struct{ Err error }

func (e *AgentMountError) Error() string { return e.Err.Error() }
func (e *AgentMountError) Unwrap() error { return e.Err }

// StartedAgent returns the agent service at the top level of h, as ask and chat use it: a
// profile without a model service is an error that points at docs/agent.md; an agent row that
// failed to mount, or a subagent's (which would leave the main agent without its tool, so
// the task would run with the wrong prompt and tools), is an *AgentMountError.
func StartedAgent(h *Host) (*agent.Service, error) {
	if _, err := Service(h, model.Key, "model service", "model"); err != nil {
		return nil, fmt.Errorf("%w; see docs/agent.md", err)
	}
	svc, ok := agent.Key.Get(h.Root())
	if !ok {
		if err := h.FailedUse(UseAgent); err != nil {
			return nil, &AgentMountError{Err: err}
		}
		return nil, fmt.Errorf("profile %q: the agent did not start", h.Profile().Source)
	}
	if err := h.FailedUse(UseAgent); err != nil {
		return nil, &AgentMountError{Err: fmt.Errorf("an agent did not start: %w", err)}
	}
	return svc, nil
}
