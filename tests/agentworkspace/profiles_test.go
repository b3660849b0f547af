//go:build linux

package agentworkspace

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cordisgo/harness/workspace/sandbox"
)

// listed is what `harness mcp list --local --json` says of the profile's own servers.
type listed struct {
	Unmanaged []struct {
		Name       string `json:"name"`
		Status     string `json:"status"`
		ServerInfo struct {
			Description string `json:"description"`
		} `json:"serverInfo"`
		Tools []string `json:"tools"`
	} `json:"unmanaged"`
}

// runHarness runs the binary in dir with a home of the test's own and returns its stdout,
// failing on a non-zero exit.
func runHarness(t *testing.T, dir string, args ...string) string {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(harness(t), args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HARNESS_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_STATE_HOME="+filepath.Join(home, ".local/state"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("harness %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// TestProfileOptions: what docs/workspace.md tells a profile to write works as written —
// the workspace is mounted where an agent runs (the built-in profiles' among them), rooted
// in the working directory, listed without starting; a
// profile's own row roots it elsewhere and makes it read-only; a row switched off leaves
// it out; without an agent it is not there.
func TestProfileOptions(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "f.txt"), []byte("elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	profile := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("extends: cli\nplugins:\n  agent:\n    use: agent\n"+body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	list := func(args ...string) listed {
		t.Helper()
		var l listed
		out := runHarness(t, dir, append(args, "mcp", "list", "--local", "--json")...)
		if err := json.Unmarshal([]byte(out), &l); err != nil {
			t.Fatalf("mcp list --json: %v\n%s", err, out)
		}
		return l
	}

	// An agent row: the workspace is mounted, rooted where the harness runs, and listed
	// without starting (lazy: its tools from the catalog entry the host made in process).
	l := list("-p", profile("agent.yaml", ""))
	if len(l.Unmanaged) != 1 || l.Unmanaged[0].Name != "workspace" || l.Unmanaged[0].Status != "lazy" {
		t.Fatalf("with an agent: %+v", l.Unmanaged)
	}
	w := l.Unmanaged[0]
	if d := w.ServerInfo.Description; !strings.HasPrefix(d, "workspace "+dir+", sandbox workspace-write, network off, enforcement ") {
		t.Errorf("with an agent: description %q", d)
	}
	if !slices.Contains(w.Tools, "mcp__workspace__edit_file") || !slices.Contains(w.Tools, "mcp__workspace__shell") {
		t.Errorf("with an agent: tools %v", w.Tools)
	}

	// Rooted elsewhere, read-only: the profile's own row.
	ro := profile("elsewhere.yaml", "  workspace:\n    use: mcpclient\n    config:\n      serverName: workspace\n      transport: stdio\n"+
		"      command: ${HARNESS_SELF}\n      args: [workspace-server, --root, "+other+", --mode, read-only]\n")
	l = list("-p", ro)
	if len(l.Unmanaged) != 1 {
		t.Fatalf("rooted elsewhere: %+v", l.Unmanaged)
	}
	w = l.Unmanaged[0]
	if d := w.ServerInfo.Description; !strings.HasPrefix(d, "workspace "+other+", sandbox read-only, ") {
		t.Errorf("rooted elsewhere: description %q", d)
	}
	if slices.Contains(w.Tools, "mcp__workspace__edit_file") || slices.Contains(w.Tools, "mcp__workspace__write_file") ||
		!slices.Contains(w.Tools, "mcp__workspace__read_file") {
		t.Errorf("read-only: tools %v", w.Tools)
	}
	if got := runHarness(t, dir, "-p", ro, "tools", "call", "--local", "mcp__workspace__read_file", `{"path":"f.txt"}`); !strings.Contains(got, "1\telsewhere") {
		t.Errorf("read_file in the other root: %q", got)
	}
	got := runHarness(t, dir, "-p", ro, "tools", "call", "--local", "mcp__workspace__shell", `{"command":"echo changed > f.txt; cat f.txt"}`)
	b, _ := os.ReadFile(filepath.Join(other, "f.txt"))
	switch {
	case sandbox.Probe() == 0:
		t.Logf("no Landlock on this kernel: a read-only workspace's command could write (%q); reported by the escape suite", got)
	case string(b) != "elsewhere\n" || !strings.Contains(got, "Permission denied"):
		t.Errorf("a read-only workspace's command wrote: %q; the file is %q", got, b)
	}

	// Switched off: left out, by a row that needs no plugin, in a profile or on the
	// command line.
	if l := list("-p", profile("off.yaml", "  workspace:\n    enabled: false\n")); len(l.Unmanaged) != 0 {
		t.Errorf("switched off: %+v", l.Unmanaged)
	}
	if l := list("-p", "cli", "--set", "plugins.workspace.enabled=false"); len(l.Unmanaged) != 0 {
		t.Errorf("switched off with --set: %+v", l.Unmanaged)
	}
	// No agent, no workspace.
	if l := list("-p", "cli", "--set", "plugins.agent.enabled=false"); len(l.Unmanaged) != 0 {
		t.Errorf("the cli profile, its agent switched off: %+v", l.Unmanaged)
	}
	// The built-in profile's agent brings it too; a call starts it.
	if l := list("-p", "cli"); len(l.Unmanaged) != 1 || l.Unmanaged[0].Status != "lazy" {
		t.Errorf("the cli profile: %+v", l.Unmanaged)
	}
	if got := runHarness(t, dir, "-p", "cli", "tools", "call", "--local", "mcp__workspace__list_dir", `{}`); !strings.Contains(got, "agent.yaml") {
		t.Errorf("list_dir through the built-in profile's lazy workspace: %q", got)
	}
}
