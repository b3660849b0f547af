package app

import (
	"context"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpmanager"
)

// methodClients is the remote method that streams the profile's own MCP
// clients (the rows the manager does not list), for the management page.
const methodClients = "harness/clients"

// watch returns the last report of every client and a channel closed at
// the next report.
func (b *statusBoard) watch() ([]mcpclient.Status, <-chan struct{}) {
	b.mu.Lock()
	if b.next == nil {
		b.next = make(chan struct{})
	}
	ch := b.next
	b.mu.Unlock()
	return b.statuses(), ch
}

// exposeClients serves harness/clients on the tree's remote API: the
// unmanaged clients' views (as the manager's, mcpmanager.View), again after
// every status report, until the caller leaves. Configurations are sent
// redacted.
func exposeClients(root *ctx.Context, b *statusBoard) error {
	_, err := ctx.ExposeRemoteStream(root, methodClients, func(rcx context.Context, _ struct{}, send func([]mcpmanager.View) error) error {
		since := map[*ctx.Scope]struct {
			phase mcpclient.Phase
			at    time.Time
		}{}
		for {
			sts, changed := b.watch()
			out := []mcpmanager.View{}
			for _, st := range sts {
				if managed(st) {
					continue
				}
				s, ok := since[st.Scope]
				if !ok || s.phase != st.Phase {
					s.phase, s.at = st.Phase, st.At
					since[st.Scope] = s
				}
				v := clientView(st)
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
