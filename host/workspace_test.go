package host

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/profiles"
)

func TestWithWorkspaceRow(t *testing.T) {
	agent := profiles.Row{ID: "agent", Use: UseAgent, Enabled: true}
	off := profiles.Row{ID: "agent", Use: UseAgent, Enabled: false}
	tools := profiles.Row{ID: "tools", Use: "toolregistry", Enabled: true}
	mine := profiles.Row{ID: "Workspace", Use: UseClient, Enabled: false}
	other := profiles.Row{ID: "files", Use: UseClient, Enabled: true, Config: map[string]any{"serverName": "workspace"}}
	for _, c := range []struct {
		name  string
		rows  []profiles.Row
		self  string
		added bool
	}{
		{"an agent", []profiles.Row{tools, agent}, "/bin/harness", true},
		{"no agent", []profiles.Row{tools}, "/bin/harness", false},
		{"an agent switched off", []profiles.Row{off}, "/bin/harness", false},
		{"no binary to serve it", []profiles.Row{agent}, "", false},
		{"the profile's own row, switched off", []profiles.Row{agent, mine}, "/bin/harness", false},
		{"a client already named workspace", []profiles.Row{agent, other}, "/bin/harness", false},
	} {
		got, added := WithWorkspaceRow(c.rows, c.self, "/src/app", map[string]string{"X": "1"})
		if grew := len(got) == len(c.rows)+1; added != c.added || grew != added {
			t.Errorf("%s: added %v, want %v", c.name, added, c.added)
			continue
		}
		if c.added {
			r := got[len(got)-1]
			if r.ID != "workspace" || r.Use != UseClient || r.Config["command"] != c.self || r.Config["serverName"] != "workspace" ||
				r.Config["env"].(map[string]any)["X"] != "1" || r.Config["startup"] != "lazy" ||
				!slices.Equal(r.Config["args"].([]any), []any{"workspace-server", "--root", "/src/app"}) {
				t.Errorf("%s: row %+v", c.name, r)
			}
			if len(c.rows) > 0 && &got[0] == &c.rows[0] {
				t.Errorf("%s: the caller's rows were changed", c.name)
			}
		}
	}
}

// TestWorkspaceSeeded: on a first run (an empty catalog cache) the workspace the host adds
// for an agent is listed without starting: its catalog entry is made in process, so the row
// comes up lazy with the server's tools, instructions and description. The binary named
// does not exist, so a start would fail. Without a cache the row has to start to list its
// tools (and fails here).
func TestWorkspaceSeeded(t *testing.T) {
	t.Chdir(t.TempDir())
	p, err := profiles.Load(profiles.LoadOptions{Name: "cli", Sets: []string{"plugins.manager.enabled=false"}})
	if err != nil {
		t.Fatal(err)
	}
	self := filepath.Join(t.TempDir(), "no-such-harness")
	status := func(opts Options) mcpclient.Status {
		t.Helper()
		opts.Logger, opts.Self = slog.New(slog.DiscardHandler), self
		cx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		h, err := Start(cx, p, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = h.Close(context.Background()) }()
		for _, st := range h.Board().Statuses() {
			if st.Server == WorkspaceServer {
				return st
			}
		}
		t.Fatalf("no workspace among %+v", h.Board().Statuses())
		return mcpclient.Status{}
	}
	cache := t.TempDir()
	for round := range 2 { // seeded, then from the entry written
		st := status(Options{CatalogDir: cache})
		if st.Phase != mcpclient.PhaseLazy || !slices.Contains(st.Tools, "mcp__workspace__shell") || !slices.Contains(st.Tools, "mcp__workspace__edit_file") {
			t.Fatalf("round %d: %+v", round, st)
		}
		if wd, _ := os.Getwd(); !strings.HasPrefix(st.ServerDescription, "workspace "+wd+", sandbox workspace-write, network off, enforcement ") {
			t.Errorf("round %d: description %q", round, st.ServerDescription)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(cache, "workspace.*.json")); len(files) != 1 {
		t.Errorf("cache files %v", files)
	}
	if st := status(Options{}); st.Phase == mcpclient.PhaseLazy {
		t.Errorf("without a cache: %+v", st)
	}
}

// BenchmarkMountWorkspace: what mounting the built-in cli profile costs without its agent,
// with the agent and no workspace, and with the agent and the lazy workspace the host adds
// (its catalog entry cached: the one-shot commands' case; nothing starts).
func BenchmarkMountWorkspace(b *testing.B) {
	cache := b.TempDir()
	b.Setenv("XDG_STATE_HOME", b.TempDir())
	b.Setenv("XDG_CONFIG_HOME", b.TempDir())
	for _, c := range []struct {
		name string
		set  []string
		self string
	}{
		{"no agent", []string{"plugins.agent.enabled=false"}, "/nonexistent/harness"},
		{"agent", nil, ""},
		{"agent and workspace", nil, "/nonexistent/harness"},
	} {
		p, err := profiles.Load(profiles.LoadOptions{Name: "cli", Sets: append(c.set, "plugins.manager.enabled=false")})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				h, err := Start(context.Background(), p, Options{Logger: slog.New(slog.DiscardHandler), CatalogDir: cache, Self: c.self})
				if err != nil {
					b.Fatal(err)
				}
				if err := h.Close(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
