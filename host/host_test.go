package host_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/elicitation"
	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/internal/demoserver"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpmanager"
	"github.com/cordisgo/harness/profiles"
	"github.com/cordisgo/harness/sampling"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// serveDemo serves the demo MCP server over Streamable HTTP at url until stop is called.
func serveDemo() (url string, stop func()) {
	h, closeSessions := demoserver.HandlerWithClose(demoserver.Options{})
	srv := httptest.NewServer(h)
	return srv.URL + "/mcp", func() { closeSessions(); srv.Close() }
}

// demoURL serves the demo MCP server over Streamable HTTP until the test ends.
func demoURL(t *testing.T) string {
	url, stop := serveDemo()
	t.Cleanup(stop)
	return url
}

// load loads the profile document doc (named name) with the built-in catalog.
func load(t *testing.T, name, doc string) *profiles.Profile {
	t.Helper()
	p, err := profiles.Load(profiles.LoadOptions{Name: name, Data: []byte(doc)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// start starts p and closes it when the test ends.
func start(t *testing.T, p *profiles.Profile, opts host.Options) *host.Host {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	cx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h, err := host.Start(cx, p, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return h
}

func clientRow(id, url string) string {
	return "  " + id + ":\n    use: mcpclient\n    config: {serverName: " + id + ", transport: streamable-http, url: \"" + url + "\"}\n"
}

// TestCheck: every problem at once, placed in the profile or at the label of the row that
// made it; strict adds what would fail at mount.
func TestCheck(t *testing.T) {
	p := load(t, "check.yaml", `plugins:
  a: {use: mcpclient, config: {serverName: same, transport: stdio, command: x, bogus: 1}}
  b: {use: mcpclient, config: {serverName: same, transport: stdio, command: y}}
  c: {use: mcpclient, config: {serverName: same, transport: stdio, command: "${HOST_TEST_UNSET}"}}
`)
	p.Rows = append(p.Rows, profiles.Row{ID: "adhoc", Use: "mcpclient", Enabled: true, Path: "plugins.adhoc",
		Config: map[string]any{"serverName": "adhoc", "transport": "nope"}})
	labels := map[string]string{"plugins.adhoc": "--stdio adhoc=x"}
	_, err := host.Check(p, host.CheckOptions{Labels: labels, LookupEnv: func(string) (string, bool) { return "", false }})
	list := ctx.ConfigErrors(err)
	if len(list) != 2 {
		t.Fatalf("want 2 problems, got %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, `profile "check.yaml"`) || !strings.Contains(msg, "plugins.a.config.bogus") ||
		!strings.Contains(msg, "--stdio adhoc=x") || !strings.Contains(msg, "plugins.adhoc.config.transport") {
		t.Fatalf("problems not placed:\n%s", msg)
	}
	p.Rows = p.Rows[:3]
	p.Rows[0].Config = map[string]any{"serverName": "same", "transport": "stdio", "command": "x"}
	warnings, err := host.Check(p, host.CheckOptions{Strict: true, LookupEnv: func(string) (string, bool) { return "", false }})
	if err == nil || !strings.Contains(err.Error(), `serverName "same" is already used by plugins.a`) || len(ctx.ConfigErrors(err)) != 2 {
		t.Fatalf("strict: %v", err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "HOST_TEST_UNSET") || !strings.Contains(warnings[0], "will fail to mount") {
		t.Fatalf("warnings %q", warnings)
	}
}

// TestOneShotLeavesHostRowsOut: without Hosting the remote and console rows do not mount
// (a one-shot use never publishes an endpoint); nested rows of an agent scope do, in a
// layer of their own.
func TestOneShotLeavesHostRowsOut(t *testing.T) {
	url := demoURL(t)
	dir := t.TempDir()
	p := load(t, "rows.yaml", `plugins:
  tools: {use: toolregistry}
  api: {use: remote, config: {endpointFile: "`+filepath.Join(dir, "endpoint.json")+`", tokenFile: "`+filepath.Join(dir, "token")+`"}}
  coder:
    plugins:
      inner: {use: mcpclient, config: {serverName: inner, transport: streamable-http, url: "`+url+`"}}
`)
	var reports atomic.Int64
	h := start(t, p, host.Options{OnStatus: func(mcpclient.Status) { reports.Add(1) }})
	if _, err := os.Stat(filepath.Join(dir, "endpoint.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a one-shot host published an endpoint file: %v", err)
	}
	if len(h.Failed()) != 0 {
		t.Fatalf("failed rows: %v", h.Failed())
	}
	if agents := h.Agents(); agents["coder"] == nil {
		t.Fatalf("agents %v", agents)
	}
	if got := h.ServerList().Names(); !slices.Equal(got, []string{"inner"}) {
		t.Fatalf("servers %v", got)
	}
	if reports.Load() == 0 || len(h.Board().NotReady()) != 0 {
		t.Fatalf("%d reports, not ready %v", reports.Load(), h.Board().NotReady())
	}
}

// TestRestartProfileClient: a profile's own client restarts and is followed until it
// connects again; an unknown name lists the known ones.
func TestRestartProfileClient(t *testing.T) {
	p := load(t, "restart.yaml", "plugins:\n  tools: {use: toolregistry}\n"+clientRow("demo", demoURL(t)))
	h := start(t, p, host.Options{})
	cx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var seen []mcpmanager.State
	v, err := h.Restart(cx, "demo", 10*time.Second, func(v mcpmanager.View) { seen = append(seen, v.Status) })
	if err != nil || v.Status != mcpmanager.StateConnected || v.Source != host.SourceProfile {
		t.Fatalf("restart: %+v, %v", v, err)
	}
	if len(seen) == 0 || seen[len(seen)-1] != mcpmanager.StateConnected {
		t.Fatalf("progress %v", seen)
	}
	_, err = h.Restart(cx, "nosuch", time.Second, func(mcpmanager.View) {})
	if ue, ok := errors.AsType[*host.UnknownServerError](err); !ok || !slices.Equal(ue.Known, []string{"demo"}) {
		t.Fatalf("unknown server: %v", err)
	}
}

// TestWatchAppliesEdits: an edited profile file is applied to the running tree: a new row
// mounts, a removed one goes, and a file that does not load keeps the running rows.
func TestWatchAppliesEdits(t *testing.T) {
	url := demoURL(t)
	path := filepath.Join(t.TempDir(), "watched.yaml")
	write := func(doc string) {
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("plugins:\n  tools: {use: toolregistry}\n" + clientRow("one", url))
	loadFile := func() (*profiles.Profile, error) { return profiles.Load(profiles.LoadOptions{Name: path}) }
	p, err := loadFile()
	if err != nil {
		t.Fatal(err)
	}
	h := start(t, p, host.Options{})
	stop := h.Watch(loadFile)
	defer stop()

	write("plugins:\n  tools: {use: toolregistry}\n" + clientRow("two", url))
	cx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		sts, changed := h.Board().Watch()
		var names []string
		for _, st := range sts {
			if st.Phase == mcpclient.PhaseConnected {
				names = append(names, st.Server)
			}
		}
		if slices.Equal(names, []string{"two"}) {
			break
		}
		select {
		case <-changed:
		case <-cx.Done():
			t.Fatalf("the edit was not applied: %v", sts)
		}
	}
}

// TestMountOffersWhatRowsAnswer: before any row mounts, the host offers what the rows will
// answer of the servers' requests: the page's forms and URLs for a console row of a
// long-running host, sampling for an agent row whose sampling is not "deny".
func TestMountOffersWhatRowsAnswer(t *testing.T) {
	noop := ctx.Define(ctx.Meta{Name: "noop"}, func(*ctx.Context, map[string]any) error { return nil })
	catalog := map[string]ctx.PluginDef{host.UseConsole: noop, host.UseAgent: noop}
	for _, tc := range []struct {
		name     string
		hosting  bool
		doc      string
		modes    string
		sampling bool
	}{
		{"hosting", true, "plugins:\n  page: {use: console}\n  coder: {use: agent, config: {sampling: deny}}\n", "[form url]", false},
		{"one-shot", false, "plugins:\n  page: {use: console}\n  team:\n    plugins:\n      coder: {use: agent}\n", "[]", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := ctx.New(ctx.Options{Logger: slog.New(slog.DiscardHandler)})
			t.Cleanup(func() { _ = root.Scope().Dispose(context.Background()) })
			h := host.New(root, load(t, "offers.yaml", tc.doc), host.Options{Catalog: catalog, Hosting: tc.hosting, Logger: slog.New(slog.DiscardHandler)})
			if err := h.Mount(); err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(elicitation.Modes(root)); got != tc.modes {
				t.Errorf("modes %s, want %s", got, tc.modes)
			}
			if got := sampling.Available(root); got != tc.sampling {
				t.Errorf("sampling offered: %v, want %v", got, tc.sampling)
			}
		})
	}
}

// CountRows counts the enabled rows that mount a plugin, nested ones too; AddTokenFile gives
// the enabled remote rows without a token file remote.token in the directory.
func TestCountRowsAndTokenFile(t *testing.T) {
	rows := []profiles.Row{
		{Use: host.UseRemote, Enabled: true},
		{Use: host.UseRemote, Enabled: true, Config: map[string]any{"tokenFile": "/own"}},
		{Enabled: true, Rows: []profiles.Row{{Use: "x", Enabled: true}, {Use: host.UseRemote}}},
	}
	if n := host.CountRows(rows); n != 3 {
		t.Errorf("CountRows: %d, want 3", n)
	}
	host.AddTokenFile(rows, "/dir")
	if got := rows[0].Config["tokenFile"]; got != filepath.Join("/dir", "remote.token") {
		t.Errorf("remote row: %v", got)
	}
	if rows[1].Config["tokenFile"] != "/own" || rows[2].Rows[1].Config != nil {
		t.Errorf("a row with its own file, or disabled: %v %v", rows[1].Config, rows[2].Rows[1].Config)
	}
}
