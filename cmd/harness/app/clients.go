package app

import (
	"context"
	"encoding/json"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpmanager"
)

// methodClients is the remote method that streams the profile's own MCP
// clients (the rows the manager does not list), for the management page.
const methodClients = "harness/clients"

// clientView is one profile-row client as harness/clients sends it: the
// fields of a manager's view (plugins/mcpmanager.View) that a client's
// report has, so the page shows both alike.
type clientView struct {
	Name             string                 `json:"name"`
	Source           string                 `json:"source"`
	Enabled          bool                   `json:"enabled"`
	Transport        string                 `json:"transport,omitempty"`
	Status           string                 `json:"status"`
	Error            string                 `json:"error,omitempty"`
	Attempt          int                    `json:"attempt,omitempty"`
	MaxAttempts      int                    `json:"maxAttempts,omitempty"`
	Since            time.Time              `json:"since,omitzero"`
	ServerInfo       *mcpmanager.ServerInfo `json:"serverInfo,omitempty"`
	ProtocolVersion  string                 `json:"protocolVersion,omitempty"`
	Tools            []string               `json:"tools"`
	InstructionBytes int                    `json:"instructionBytes,omitempty"`
	StderrTail       string                 `json:"stderrTail,omitempty"`
	Config           json.RawMessage        `json:"config,omitempty"`
}

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
// unmanaged clients' views, again after every status report, until the
// caller leaves. Configurations are sent redacted.
func exposeClients(root *ctx.Context, b *statusBoard) error {
	_, err := root.ExposeRemote(ctx.RemoteMethod{Name: methodClients, Stream: func(rc context.Context, _ json.RawMessage, send func(any) error) error {
		since := map[*ctx.Scope]struct {
			phase mcpclient.Phase
			at    time.Time
		}{}
		for {
			sts, changed := b.watch()
			out := []clientView{}
			for _, st := range sts {
				if managed(st) {
					continue
				}
				s, ok := since[st.Scope]
				if !ok || s.phase != st.Phase {
					s.phase, s.at = st.Phase, st.At
					since[st.Scope] = s
				}
				v := clientView{Name: st.Server, Source: "profile", Enabled: true, Transport: st.Transport,
					Status: string(st.Phase), Error: st.Err, Attempt: st.Attempt, MaxAttempts: st.MaxAttempts,
					Since: s.at, ProtocolVersion: st.ProtocolVersion, Tools: st.Tools,
					InstructionBytes: st.InstructionBytes, StderrTail: st.StderrTail}
				if v.Tools == nil {
					v.Tools = []string{}
				}
				if st.ServerName != "" {
					v.ServerInfo = &mcpmanager.ServerInfo{Name: st.ServerName, Version: st.ServerVersion}
				}
				if cfg, ok := mcpclient.Plugin.Config(st.Scope); ok {
					if v.Transport == "" {
						v.Transport = cfg.Transport
					}
					v.Config, _ = json.Marshal(cfg.Redacted())
				}
				out = append(out, v)
			}
			if err := send(out); err != nil {
				return err
			}
			select {
			case <-rc.Done():
				return context.Cause(rc)
			case <-changed:
			}
		}
	}})
	return err
}
