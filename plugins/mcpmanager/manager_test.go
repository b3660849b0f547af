package mcpmanager

import (
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/testkit/mcptest"
	"github.com/cordisgo/harness/testkit/regtest"
)

// Port of manager.spec "mounts enabled servers from the initial document and reports
// connected", "disables without losing the entry" and the list() shape.
func TestMountOnBoot(t *testing.T) {
	t.Parallel()
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
	if !slices.Equal(a.Tools, regtest.PublicTools("alpha", mcptest.StdioTools...)) {
		t.Fatalf("alpha tools %v", a.Tools)
	}
	if a.ServerInfo == nil || a.ServerInfo.Name != "mcpm-test" || a.ServerInfo.Version != "0.0.7" ||
		a.ProtocolVersion != mcpclient.DefaultStdioProtocolVersion || a.InstructionBytes == 0 {
		t.Fatalf("alpha server info: %s", dump(a))
	}
	if a.StartedAt.IsZero() || a.ConnectedAt.IsZero() || a.Since.IsZero() || a.UpdatedAt.IsZero() || a.Error != "" {
		t.Fatalf("alpha timestamps/error: %s", dump(a))
	}
	if a.Config.Env[mcptest.ModeEnv] != "[redacted]" || a.Config.ServerName != "alpha" {
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
	t.Parallel()
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
	res, err := reg.Execute(h.root, h.root, "mcp__"+server+"__whoami", nil, toolregistry.ExecOptions{})
	if err != nil {
		return "", err
	}
	return res.Text(), nil
}

// Port of manager.spec "mounts new server on change", "disposes removed server",
// "disables without losing entry", "remounts changed enabled server" and reconcile.spec
// "unchanged ⇒ no-op", plus invalid and half-written files.
func TestHotReload(t *testing.T) {
	t.Parallel()
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
		strings.Replace(stdioEntry(t, "c", "normal", ""), mcptest.LabelEnv+`: "c"`, mcptest.LabelEnv+`: "c2"`, 1)
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

// Port of manager.spec's allow-list cases: stdio and HTTP servers register only the listed
// tools, no allow-list admits all, a changed allow-list remounts, an empty one fails the
// server without starting a client.
func TestAllowedTools(t *testing.T) {
	t.Parallel()
	srv := mcptest.NewHTTP(t, nil) // closed after the host: its clients hold streams open
	httpEntry := fmt.Sprintf("  web:\n    transport: streamable-http\n    url: %s\n    allowedTools: [whoami]\n", srv.URL())
	settings := "servers:\n" + stdioEntry(t, "s", "normal", "allowedTools: [echo]") + httpEntry +
		stdioEntry(t, "all", "normal", "") + stdioEntry(t, "empty", "normal", "allowedTools: []")
	h := newHost(t, hostOptions{settings: &settings})
	snap := h.waitSnap("servers up", func(s Snapshot) bool {
		a, _ := find(s, "s")
		b, _ := find(s, "web")
		c, _ := find(s, "all")
		d, _ := find(s, "empty")
		return a.Status == StateConnected && b.Status == StateConnected && c.Status == StateConnected && d.Status == StateFailed
	})
	for name, want := range map[string][]string{
		"s":   {"mcp__s__echo"},
		"web": {"mcp__web__whoami"},
		"all": regtest.PublicTools("all", mcptest.StdioTools...),
	} {
		if v, _ := find(snap, name); !slices.Equal(v.Tools, want) {
			t.Fatalf("%s tools %v, want %v", name, v.Tools, want)
		}
	}
	if v, _ := find(snap, "web"); v.Transport != mcpclient.TransportStreamableHTTP {
		t.Fatalf("web transport %q", v.Transport)
	}
	if v, _ := find(snap, "empty"); !strings.Contains(v.Error, "allowedTools") || !strings.Contains(v.Error, "is empty") || v.Starts != 0 {
		t.Fatalf("empty: %s", dump(v))
	}
	if n := len(h.root.Registry().Scopes(mcpclient.Plugin)); n != 3 {
		t.Fatalf("%d client instances, want 3 (none for the empty allow-list)", n)
	}

	// A changed allow-list remounts with the new tool set.
	h.write(strings.Replace(settings, "allowedTools: [echo]", "allowedTools: [echo, whoami]", 1))
	snap = h.waitSnap("s remounted", func(s Snapshot) bool {
		v, _ := find(s, "s")
		return v.Starts == 2 && v.Status == StateConnected
	})
	if v, _ := find(snap, "s"); !slices.Equal(v.Tools, []string{"mcp__s__echo", "mcp__s__whoami"}) {
		t.Fatalf("s tools after the change: %v", v.Tools)
	}
	if v, _ := find(snap, "web"); v.Starts != 1 {
		t.Fatalf("web was remounted: %s", dump(v))
	}
}

// Port of reconcile.spec "mount re-enabled" and "disabled-and-changed ⇒ only dispose".
func TestReenable(t *testing.T) {
	t.Parallel()
	fc := newFakeClients()
	h := fakeHost(t, fc, hostOptions{}, "a")
	h.write("servers:\n" + fakeEntry("a", "enabled: false\nargs: [changed]"))
	h.waitStatus(StateDisabled, "a")
	if fc.count(fc.live, "a") != 0 || fc.count(fc.mounted, "a") != 1 {
		t.Fatalf("disabled and changed: live %d, mounted %d", fc.count(fc.live, "a"), fc.count(fc.mounted, "a"))
	}
	h.write("servers:\n" + fakeEntry("a", "args: [changed]"))
	snap := h.waitStatus(StateConnected, "a")
	if v, _ := find(snap, "a"); v.Starts != 2 || fc.count(fc.live, "a") != 1 {
		t.Fatalf("re-enabled: %s", dump(v))
	}
}

// Without the tools service, a server waits (the client injects it) and its view says why;
// mounting the registry lets it connect.
func TestWaitsForTools(t *testing.T) {
	t.Parallel()
	settings := "servers:\n" + stdioEntry(t, "a", "normal", "")
	h := newHost(t, hostOptions{settings: &settings, noTools: true})
	h.waitSnap("waiting for tools", func(s Snapshot) bool {
		v, _ := find(s, "a")
		return v.Status == StateStarting && strings.Contains(v.Error, "tools service")
	})
	ctxtest.MountActive(t, h.root, toolregistry.Plugin, nil)
	h.waitStatus(StateConnected, "a")
}
