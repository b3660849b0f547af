package host

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpmanager"
	"github.com/cordisgo/harness/profiles"
)

// mounts records the scope of every mounted row by its key path, so that
// start-up can report the rows that failed. It is safe for concurrent use:
// agent scopes mount their rows on their own goroutines.
type mounts struct {
	mu     sync.Mutex
	scopes map[string]*ctx.Scope
	order  []string
	// agents holds the layered context of every agent scope by its layer name (see
	// agentName), for the gateway's agent routes.
	agents map[string]*ctx.Context
}

// addAgent records the layered context of the agent scope of the row at path.
func (m *mounts) addAgent(path string, c *ctx.Context) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.agents == nil {
		m.agents = map[string]*ctx.Context{}
	}
	m.agents[agentName(path)] = c
}

// agentContexts returns the live agent scopes' layered contexts by layer name.
func (m *mounts) agentContexts() map[string]*ctx.Context {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]*ctx.Context, len(m.agents))
	for k, c := range m.agents {
		if c.Scope().State() == ctx.Active || c.Scope().State() == ctx.Loading {
			out[k] = c
		}
	}
	return out
}

// agentName is the layer name of the agent row at path: its row ids joined with dots
// ("plugins.coder.plugins.review" → "coder.review").
func agentName(path string) string {
	return strings.ReplaceAll(strings.TrimPrefix(path, "plugins."), ".plugins.", ".")
}

func (m *mounts) add(path string, s *ctx.Scope) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.scopes == nil {
		m.scopes = map[string]*ctx.Scope{}
	}
	if _, seen := m.scopes[path]; !seen {
		m.order = append(m.order, path)
	}
	m.scopes[path] = s // a restarted agent scope mounts its rows again
}

// scope returns the scope mounted for the row at path, or nil.
func (m *mounts) scope(path string) *ctx.Scope {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.scopes[path]
}

// remove forgets the row at path and every row mounted inside it, and returns the row's
// scope (nil if none) for the caller to dispose.
func (m *mounts) remove(path string) *ctx.Scope {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.scopes[path]
	inside := func(p string) bool { return p == path || strings.HasPrefix(p, path+".") }
	m.order = slices.DeleteFunc(m.order, func(p string) bool {
		if inside(p) {
			delete(m.scopes, p)
			return true
		}
		return false
	})
	for k := range m.agents {
		if k == agentName(path) || strings.HasPrefix(k, agentName(path)+".") {
			delete(m.agents, k)
		}
	}
	return s
}

// failed returns "path: error" for every mounted row whose scope failed,
// in mount order.
func (m *mounts) failed() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, p := range m.order {
		if s := m.scopes[p]; s.State() == ctx.Failed {
			out = append(out, fmt.Sprintf("%s: %v", p, s.Err()))
		}
	}
	return out
}

// failedUse returns the error of the first mounted row of the plugin called use whose
// scope failed, or nil.
func (m *mounts) failedUse(use string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range m.order {
		s := m.scopes[p]
		if s.Def() != nil && s.Def().Name() == use && s.State() == ctx.Failed {
			return fmt.Errorf("%s: %w", p, s.Err())
		}
	}
	return nil
}

// mountRows mounts the enabled rows in order on c. A row is
// catalog[row.Use] mounted with row.Config; a row with nested rows (or an
// empty plugins map, profiles.Row.AgentScope) is an
// agent scope named after the row: a layer of its own (ctx.Context.Layered)
// in which the row's own plugin (if it has one) and then its nested rows
// are mounted, so that the tools, prompt sections and resource providers
// they register are visible inside that scope only. Mounting returns at
// once: scopes load on their own goroutines (see ctx.Context.Plugin);
// configurations were decoded up front (Check).
func mountRows(c *ctx.Context, catalog map[string]ctx.PluginDef, rows []profiles.Row, m *mounts) error {
	for _, r := range rows {
		if !r.Enabled {
			continue
		}
		if !r.AgentScope() {
			s, err := c.Plugin(catalog[r.Use], r.Config)
			if err != nil {
				return fmt.Errorf("mounting %s: %w", r.Path, err)
			}
			m.add(r.Path, s)
			continue
		}
		agent := ctx.Define(ctx.Meta{Name: r.ID}, func(c *ctx.Context, _ struct{}) error {
			layer := c.Layered() // what the row's plugins register stays in this agent scope
			m.addAgent(r.Path, layer)
			if r.Use != "" {
				s, err := layer.Plugin(catalog[r.Use], r.Config)
				if err != nil {
					return fmt.Errorf("mounting %s: %w", r.Path+".use", err)
				}
				m.add(r.Path+".use", s)
			}
			return mountRows(layer, catalog, r.Rows, m)
		})
		s, err := c.Plugin(agent, nil)
		if err != nil {
			return fmt.Errorf("mounting %s: %w", r.Path, err)
		}
		m.add(r.Path, s)
	}
	return nil
}

// waitReady waits, until cx is done, for the tree under root to settle:
// every plugin mounted so far has loaded or failed. The MCP client's
// activation includes its first connection and tool discovery (bounded by
// its startupTimeoutMs), so a settled tree has discovered every server that
// could be reached. The MCP server manager mounts its servers' clients
// from a worker of its own, after its activation: with a manager in the
// tree, waitReady then also waits until the manager has read its settings
// and none of its servers is starting, and lets the tree settle again.
func waitReady(cx context.Context, root *ctx.Context) error {
	if err := root.Settle(cx); err != nil {
		return err
	}
	m, ok := mcpmanager.Key.Get(root)
	if !ok || m == nil {
		return nil
	}
	wcx, cancel := context.WithCancel(cx)
	defer cancel()
	for snap := range m.Watch(wcx) {
		if managerSettled(snap) {
			break
		}
	}
	if err := cx.Err(); err != nil {
		return err
	}
	return root.Settle(cx)
}

// managerSettled reports whether a manager's snapshot shows its settings
// read (or missing, or rejected) and no server starting or stopping.
func managerSettled(snap mcpmanager.Snapshot) bool {
	st := snap.Settings
	if st.File != "" && st.LoadedAt.IsZero() && !st.Missing && st.Error == "" {
		return false
	}
	for _, v := range snap.Servers {
		if v.Status == mcpmanager.StateStarting || v.Status == mcpmanager.StateStopping {
			return false
		}
	}
	return true
}
