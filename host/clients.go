package host

import (
	"context"
	"slices"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpmanager"
)

// exposeClients serves MethodClients on the tree's remote API: the unmanaged clients'
// views (as the manager's, mcpmanager.View), again after every status report, until the
// caller leaves. Configurations are sent redacted.
func exposeClients(root *ctx.Context, b *StatusBoard) error {
	_, err := MethodClients.Expose(root, func(rcx context.Context, _ struct{}, send func([]mcpmanager.View) error) error {
		since := map[*ctx.Scope]struct {
			phase mcpclient.Phase
			at    time.Time
		}{}
		for {
			sts, changed := b.Watch()
			out := []mcpmanager.View{}
			for _, st := range sts {
				if Managed(st) {
					continue
				}
				s, ok := since[st.Scope]
				if !ok || s.phase != st.Phase {
					s.phase, s.at = st.Phase, st.At
					since[st.Scope] = s
				}
				v := ClientView(st)
				v.Since = s.at
				out = append(out, v)
			}
			if err := send(out); err != nil {
				return err
			}
			select {
			case <-rcx.Done():
				return context.Cause(rcx)
			case <-changed:
			}
		}
	})
	return err
}

// clientList lists the MCP clients of the tree that the manager (if any) did not mount:
// every such client's last status report, then the clients whose scope failed before
// reporting (an invalid or duplicate server name, say).
func (h *Host) clientList() []mcpmanager.View {
	out := []mcpmanager.View{}
	seen := map[*ctx.Scope]bool{}
	m := h.mounts
	m.mu.Lock()
	defer m.mu.Unlock()
	// In the profile's order (the order the rows were mounted in), not the order the
	// servers happened to report in.
	pos := make(map[*ctx.Scope]int, len(m.order))
	for i, path := range m.order {
		pos[m.scopes[path]] = i
	}
	sts := h.board.Statuses()
	slices.SortStableFunc(sts, func(x, y mcpclient.Status) int { return rowPos(pos, x.Scope) - rowPos(pos, y.Scope) })
	for _, st := range sts {
		seen[st.Scope] = true
		if Managed(st) {
			continue
		}
		out = append(out, ClientView(st))
	}
	for _, path := range m.order {
		s := m.scopes[path]
		if seen[s] || s.Def() == nil || s.Def().Name() != UseClient || s.State() != ctx.Failed {
			continue
		}
		v := mcpmanager.View{Name: path, Source: SourceProfile, Status: mcpmanager.StateFailed, Tools: []string{}}
		if s.Err() != nil {
			v.Error = s.Err().Error()
		}
		out = append(out, v)
	}
	return out
}

// rowPos is the position of the row whose scope is s (or whose scope holds s), from pos;
// scopes of no row come last.
func rowPos(pos map[*ctx.Scope]int, s *ctx.Scope) int {
	for ; s != nil; s = s.Parent() {
		if i, ok := pos[s]; ok {
			return i
		}
	}
	return len(pos)
}
