package mcpmanager

import (
	"slices"
	"testing"

	"github.com/cordisgo/harness/plugins/mcpclient"
)

// Port of manager.spec "mounts enabled servers from the initial document and reports
// connected", "disables without losing the entry" and the list() shape.
func TestMountOnBoot(t *testing.T) {
	settings := "servers:\n" + stdioEntry(t, "beta", "normal", "") + stdioEntry(t, "alpha", "normal", "") +
		stdioEntry(t, "off", "normal", "enabled: false")
	h := newHost(t, hostOptions{settings: &settings})
	snap := h.waitStatus(StateConnected, "beta", "alpha")
	if got := names(snap); !slices.Equal(got, []string{"beta", "alpha", "off"}) {
		t.Fatalf("list order %v: want document order", got)
	}
	off, _ := find(snap, "off")
	if off.Status != StateDisabled || off.Enabled || off.Starts != 0 {
		t.Fatalf("off: %+v", off)
	}
	a, _ := find(snap, "alpha")
	if a.Source != SourceSettings || !a.Enabled || a.Transport != mcpclient.TransportStdio || a.Starts != 1 {
		t.Fatalf("alpha: %s", dump(a))
	}
	if !slices.Equal(a.Tools, []string{"mcp__alpha__echo", "mcp__alpha__whoami"}) {
		t.Fatalf("alpha tools %v", a.Tools)
	}
	if a.ServerInfo == nil || a.ServerInfo.Name != "mcpm-test" || a.ServerInfo.Version != "0.0.7" ||
		a.ProtocolVersion != mcpclient.DefaultStdioProtocolVersion || a.InstructionBytes == 0 {
		t.Fatalf("alpha server info: %s", dump(a))
	}
	if a.StartedAt.IsZero() || a.ConnectedAt.IsZero() || a.Since.IsZero() || a.UpdatedAt.IsZero() || a.Error != "" {
		t.Fatalf("alpha timestamps/error: %s", dump(a))
	}
	if a.Config.Env[serverModeEnv] != "[redacted]" || a.Config.ServerName != "alpha" {
		t.Fatalf("alpha config not redacted: %s", dump(a.Config))
	}
	tools := h.tools()
	for _, want := range []string{"mcp__alpha__echo", "mcp__beta__whoami"} {
		if !slices.Contains(tools, want) {
			t.Fatalf("registry %v lacks %s", tools, want)
		}
	}
	h.events.WaitFor(t, func(evs []StatusChange) bool {
		for _, ev := range evs {
			if ev.Name == "alpha" && ev.Status.Status == StateConnected {
				return true
			}
		}
		return false
	})
}
