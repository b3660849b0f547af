package mcpmanager

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpclient/catalog"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/testkit/mcptest"
	"github.com/cordisgo/harness/testkit/regtest"
)

// host is a tree with the tools service and the manager mounted, and a settings file in a
// temporary directory.
type host struct {
	t        *testing.T
	root     *ctx.Context
	log      *ctxtest.Log
	dir      string
	settings string
	creds    string
	scope    *ctx.Scope
	m        *Manager
	events   *ctxtest.Recorder[StatusChange]
}

type hostOptions struct {
	settings   *string // initial settings file content; nil writes no file
	noSettings bool    // configure no settings file at all
	hooks      *hooks
	noTools    bool
	creds      map[string]string // written to the credentials file with mode 0600
	before     ctx.PluginDef     // mounted (and active) before the manager
	catalog    bool              // provide a catalog store (in the host's directory) before the manager
}

func newHost(t *testing.T, o hostOptions) *host {
	t.Helper()
	root, log := ctxtest.NewLogged(t)
	dir := t.TempDir()
	h := &host{t: t, root: root, log: log, dir: dir,
		settings: filepath.Join(dir, "mcp-servers.yaml"), creds: filepath.Join(dir, "credentials.yaml")}
	if o.creds != nil {
		var b strings.Builder
		for k, v := range o.creds {
			fmt.Fprintf(&b, "%s: %q\n", k, v)
		}
		if err := os.WriteFile(h.creds, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if o.settings != nil {
		h.write(*o.settings)
	}
	h.events = ctxtest.Record(t, root, StatusEvent)
	if o.before != nil {
		ctxtest.MountActive(t, root, o.before, nil)
	}
	if !o.noTools {
		ctxtest.MountActive(t, root, toolregistry.Plugin, nil)
	}
	if o.catalog {
		store, err := catalog.Open(catalog.Options{Dir: filepath.Join(dir, "catalog")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := catalog.Key.Provide(root, store); err != nil {
			t.Fatal(err)
		}
	}
	cfg := map[string]any{"credentialsFile": h.creds, "debounceMs": 20}
	if !o.noSettings {
		cfg["settingsFile"] = h.settings
	}
	mc := root
	if o.hooks != nil {
		mc = root.With(hooksKey{}, o.hooks)
	}
	// Not MountActive: Settle would wait for the clients' first connections too.
	h.scope = ctxtest.Mount(t, mc, Plugin, cfg)
	if err := h.scope.Wait(ctxtest.Wait(t)); err != nil {
		t.Fatalf("manager load: %v", err)
	}
	ctxtest.RequireState(t, h.scope, ctx.Active)
	m, ok := Key.Get(root)
	if !ok {
		t.Fatal("mcpManager not provided")
	}
	h.m = m
	return h
}

// write replaces the settings file (truncate and write: the watcher may see it empty).
func (h *host) write(content string) {
	h.t.Helper()
	if err := os.WriteFile(h.settings, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// waitSnap waits until pred holds for the manager's snapshot and returns it.
func (h *host) waitSnap(what string, pred func(Snapshot) bool) Snapshot {
	h.t.Helper()
	cx, cancel := context.WithTimeout(context.Background(), ctxtest.Timeout)
	defer cancel()
	var last Snapshot
	for snap := range h.m.Watch(cx) {
		last = snap
		if pred(snap) {
			return snap
		}
	}
	h.t.Fatalf("%s: not reached; last snapshot:\n%s", what, dump(last))
	return last
}

// waitStatus waits until every named server's (non-removed) view has the given status.
func (h *host) waitStatus(want State, names ...string) Snapshot {
	h.t.Helper()
	return h.waitSnap(fmt.Sprintf("%v %s", names, want), func(s Snapshot) bool {
		for _, n := range names {
			v, ok := find(s, n)
			if !ok || v.Status != want {
				return false
			}
		}
		return true
	})
}

// find returns the live (non-removed) view called name.
func find(s Snapshot, name string) (View, bool) {
	for _, v := range s.Servers {
		if v.Name == name && !v.Removed {
			return v, true
		}
	}
	return View{}, false
}

func names(s Snapshot) []string {
	var out []string
	for _, v := range s.Servers {
		n := v.Name
		if v.Removed {
			n += "(removed)"
		}
		out = append(out, n)
	}
	return out
}

func dump(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// tools returns the names of the registered tools visible from the root.
func (h *host) tools() []string {
	reg, ok := toolregistry.Key.Get(h.root)
	if !ok {
		return nil
	}
	return regtest.Names(reg, h.root, "")
}

// stdioEntry renders a settings entry for the test server (indented under servers:).
func stdioEntry(t testing.TB, name string, mode mcptest.Mode, extra string) string {
	return stdioEntryEnv(t, name, mode, nil, extra)
}

// stdioEntryEnv is stdioEntry with more environment entries (values are quoted).
func stdioEntryEnv(t testing.TB, name string, mode mcptest.Mode, env map[string]string, extra string) string {
	command, base := mcptest.Stdio(t, mode, name)
	var b strings.Builder
	fmt.Fprintf(&b, "  %s:\n", name)
	fmt.Fprintf(&b, "    transport: stdio\n")
	fmt.Fprintf(&b, "    command: %q\n", command)
	fmt.Fprintf(&b, "    env:\n")
	maps.Copy(base, env)
	for _, k := range slices.Sorted(maps.Keys(base)) {
		fmt.Fprintf(&b, "      %s: %q\n", k, base[k])
	}
	fmt.Fprintf(&b, "    reconnect: {initialDelayMs: 50, maxDelayMs: 200, maxAttempts: 2}\n")
	for _, line := range strings.Split(strings.TrimRight(extra, "\n"), "\n") {
		if line != "" {
			b.WriteString("    " + line + "\n")
		}
	}
	return b.String()
}

// stdioConfig is an mcpclient configuration for the test server, for Register.
func stdioConfig(t testing.TB, mode mcptest.Mode) mcpclient.Config {
	var cfg mcpclient.Config
	cfg.Default()
	cfg.Transport = mcpclient.TransportStdio
	cfg.Command, cfg.Env = mcptest.Stdio(t, mode, "")
	cfg.Reconnect.InitialDelayMs, cfg.Reconnect.MaxDelayMs, cfg.Reconnect.MaxAttempts = 50, 200, 2
	return cfg
}

// ---- a fake client ----------------------------------------------------------------------

// fakeClients is a client plugin that connects nowhere: it reports what the test scripts
// and registers one tool, so tests of the manager's own logic run without processes.
type fakeClients struct {
	mu         sync.Mutex
	mounted    map[string]int // mounts per server
	live       map[string]int // live instances per server
	updated    map[string]int // configuration updates taken in place (roots alone)
	incomplete map[string]bool
	block      map[string]chan struct{} // apply waits on it
	onDispose  func(name string)        // called by each instance's cleanup
	onUpdate   func(name string)        // called by each update taken in place
	def        ctx.PluginDef
}

func newFakeClients() *fakeClients {
	f := &fakeClients{mounted: map[string]int{}, live: map[string]int{}, updated: map[string]int{}, incomplete: map[string]bool{}, block: map[string]chan struct{}{}}
	f.def = ctx.Define(ctx.Meta{Name: "mcpclient", Inject: []ctx.Dependency{toolregistry.Key}}, f.apply)
	return f
}

func (f *fakeClients) apply(c *ctx.Context, cfg mcpclient.Config) error {
	name := cfg.ServerName
	report := func(st mcpclient.Status) {
		st.Server, st.Scope, st.At = name, c.Scope(), time.Now()
		if s, ok := mcpclient.StatusSinkKey.Get(c); ok {
			s.ReportStatus(st)
		}
	}
	f.mu.Lock()
	f.mounted[name]++
	f.live[name]++
	wait := f.block[name]
	f.mu.Unlock()
	if _, err := c.Defer("fake", func(context.Context) error {
		f.mu.Lock()
		f.live[name]--
		inc := f.incomplete[name]
		onDispose := f.onDispose
		f.mu.Unlock()
		if onDispose != nil {
			onDispose(name)
		}
		report(mcpclient.Status{Phase: mcpclient.PhaseDisposed, CleanupIncomplete: inc})
		if inc {
			return fmt.Errorf("fake close: %w", mcpclient.ErrCleanupIncomplete)
		}
		return nil
	}); err != nil {
		return err
	}
	// Like the real client, a change of roots alone is taken in place.
	if err := ctx.OnConfigUpdate(c, func(next mcpclient.Config) bool {
		if !mcpclient.RootsOnlyChange(cfg, next) {
			return false
		}
		cfg = next
		f.mu.Lock()
		f.updated[name]++
		onUpdate := f.onUpdate
		f.mu.Unlock()
		if onUpdate != nil {
			onUpdate(name)
		}
		return true
	}); err != nil {
		return err
	}
	report(mcpclient.Status{Phase: mcpclient.PhaseConnecting})
	if wait != nil {
		select {
		case <-wait:
		case <-c.Done():
			return context.Cause(c)
		}
	}
	tool := "mcp__" + name + "__ping"
	if _, err := toolregistry.Key.Use(c).Register(c, toolregistry.Tool{Name: tool, Description: "ping",
		Execute: func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
			return toolregistry.TextResult("pong"), nil
		}}); err != nil {
		return err
	}
	report(mcpclient.Status{Phase: mcpclient.PhaseConnected, Transport: cfg.Transport, ServerName: "fake", ServerVersion: "1",
		ProtocolVersion: "2025-11-25", Tools: []string{tool}})
	return nil
}

func (f *fakeClients) count(m map[string]int, name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return m[name]
}

// fakeEntry renders a settings entry the fake client accepts.
// fakeHost is newHost with o's settings listing one fake server (fakeEntry) per name and its
// client hook set to fc's fakes, once every named server is connected.
func fakeHost(t *testing.T, fc *fakeClients, o hostOptions, names ...string) *host {
	t.Helper()
	settings := "servers:\n"
	for _, n := range names {
		settings += fakeEntry(n, "")
	}
	o.settings = &settings
	o.hooks = &hooks{client: fc.def}
	h := newHost(t, o)
	h.waitStatus(StateConnected, names...)
	return h
}

func fakeEntry(name, extra string) string {
	s := fmt.Sprintf("  %s:\n    transport: stdio\n    command: /bin/true\n", name)
	for _, line := range strings.Split(strings.TrimRight(extra, "\n"), "\n") {
		if line != "" {
			s += "    " + line + "\n"
		}
	}
	return s
}
