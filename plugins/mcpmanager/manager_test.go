package mcpmanager

import (
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/toolregistry"
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

// One server that hangs on start does not delay five fast ones: the hanging one is first in
// the document and keeps "starting" (its startup timeout is a minute) while the five
// connect.
func TestParallelMounts(t *testing.T) {
	settings := "servers:\n" + stdioEntry(t, "slow", "hang", "")
	fast := []string{"f1", "f2", "f3", "f4", "f5"}
	for _, n := range fast {
		settings += stdioEntry(t, n, "normal", "")
	}
	h := newHost(t, hostOptions{settings: &settings})
	snap := h.waitStatus(StateConnected, fast...)
	if v, _ := find(snap, "slow"); v.Status != StateStarting {
		t.Fatalf("slow: %s", dump(v))
	}
	// The same holds for a reload that adds servers next to a hanging one.
	settings += stdioEntry(t, "f6", "normal", "")
	h.write(settings)
	snap = h.waitStatus(StateConnected, "f6")
	if v, _ := find(snap, "slow"); v.Status != StateStarting {
		t.Fatalf("slow after reload: %s", dump(v))
	}
}

// whoami calls the server's whoami tool through the registry: "<label> pid=<pid>".
func (h *host) whoami(server string) string {
	h.t.Helper()
	got, err := h.tryWhoami(server)
	if err != nil {
		h.t.Fatalf("whoami %s: %v", server, err)
	}
	return got
}

func (h *host) tryWhoami(server string) (string, error) {
	reg, _ := toolregistry.Key.Get(h.root)
	res, err := reg.Execute(h.root, "mcp__"+server+"__whoami", nil, toolregistry.ExecOptions{})
	if err != nil {
		return "", err
	}
	return res.Text(), nil
}

// Port of manager.spec "mounts new server on change", "disposes removed server",
// "disables without losing entry", "remounts changed enabled server" and reconcile.spec
// "unchanged ⇒ no-op", plus invalid and half-written files.
func TestHotReload(t *testing.T) {
	base := "servers:\n" + stdioEntry(t, "a", "normal", "") + stdioEntry(t, "b", "normal", "")
	h := newHost(t, hostOptions{settings: &base})
	h.waitStatus(StateConnected, "a", "b")
	pidA := h.whoami("a")

	// Add: c mounts, a and b keep their processes.
	withC := base + stdioEntry(t, "c", "normal", "")
	h.write(withC)
	snap := h.waitStatus(StateConnected, "a", "b", "c")
	if got := names(snap); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("after add: %v", got)
	}
	if h.whoami("a") != pidA {
		t.Fatal("an unchanged server was restarted by an add")
	}
	if v, _ := find(snap, "a"); v.Starts != 1 {
		t.Fatalf("a starts %d", v.Starts)
	}

	// Remove b: it leaves the list and its tools go.
	noB := "servers:\n" + stdioEntry(t, "a", "normal", "") + stdioEntry(t, "c", "normal", "")
	h.write(noB)
	h.waitSnap("b removed", func(s Snapshot) bool { return slices.Equal(names(s), []string{"a", "c"}) })
	if tools := h.tools(); slices.Contains(tools, "mcp__b__echo") {
		t.Fatalf("b's tools remain: %v", tools)
	}
	if h.whoami("a") != pidA {
		t.Fatal("a was restarted by a removal")
	}

	// Disable a: the entry stays, disabled, without tools.
	disA := "servers:\n" + stdioEntry(t, "a", "normal", "enabled: false") + stdioEntry(t, "c", "normal", "")
	h.write(disA)
	snap = h.waitStatus(StateDisabled, "a")
	if got := names(snap); !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("after disable: %v", got)
	}
	if tools := h.tools(); slices.Contains(tools, "mcp__a__echo") {
		t.Fatalf("a's tools remain: %v", tools)
	}
	pidC := h.whoami("c")

	// Change c (its label): a new instance with the same tool names.
	changed := "servers:\n" + stdioEntry(t, "a", "normal", "enabled: false") +
		strings.Replace(stdioEntry(t, "c", "normal", ""), "MCPM_LABEL: c", "MCPM_LABEL: c2", 1)
	h.write(changed)
	h.waitSnap("c replaced", func(s Snapshot) bool {
		v, ok := find(s, "c")
		return ok && v.Status == StateConnected && v.Starts == 2
	})
	if got := h.whoami("c"); got == pidC || !strings.HasPrefix(got, "c2 ") {
		t.Fatalf("c after change: %q (before %q)", got, pidC)
	}
	pidC = h.whoami("c")

	// An invalid file is rejected; the last good configuration keeps running.
	h.write("servers:\n  c: {transport: stdio, command: x, bogus: 1}\n")
	snap = h.waitSnap("settings error", func(s Snapshot) bool { return strings.Contains(s.Settings.Error, "bogus") })
	if v, _ := find(snap, "c"); v.Status != StateConnected || h.whoami("c") != pidC {
		t.Fatalf("c after an invalid file: %s", dump(v))
	}
	if len(h.log.Records(slog.LevelError)) == 0 {
		t.Fatal("the rejected file was not logged")
	}

	// A half-written file (cut inside a quoted string), then the complete one.
	full := changed + stdioEntry(t, "d", "normal", "")
	h.write(full[:len(full)-40] + "\"")
	h.waitSnap("half-written file rejected", func(s Snapshot) bool {
		return strings.Contains(s.Settings.Error, "not valid YAML") || strings.Contains(s.Settings.Error, "key")
	})
	if h.whoami("c") != pidC {
		t.Fatal("c restarted by a half-written file")
	}
	h.write("")
	h.waitSnap("empty file rejected", func(s Snapshot) bool { return strings.Contains(s.Settings.Error, "empty") })
	h.write(full)
	snap = h.waitStatus(StateConnected, "c", "d")
	if snap.Settings.Error != "" || snap.Settings.LoadedAt.IsZero() {
		t.Fatalf("settings status after recovery: %+v", snap.Settings)
	}
	if h.whoami("c") != pidC {
		t.Fatal("c restarted although its entry did not change")
	}

	// Deleting the file configures no servers.
	if err := os.Remove(h.settings); err != nil {
		t.Fatal(err)
	}
	snap = h.waitSnap("file removed", func(s Snapshot) bool { return len(s.Servers) == 0 && s.Settings.Missing })
	if tools := h.tools(); len(tools) != 0 {
		t.Fatalf("tools after removal: %v", tools)
	}
}
