//go:build unix

package mcpclient

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient/catalog"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/testkit/benchtest"
	"github.com/cordisgo/harness/testkit/mcptest"
)

// fleetSize is the fleet of the lazy-fleet test and benchmark.
const fleetSize = 50

// lazyFleet is a tree with a catalog store in which every server of a fleet of stdio test
// servers (the test binary, reporting its starts to ev) has a cache entry, as after a
// previous run.
type lazyFleet struct {
	root  *ctx.Context
	reg   *toolregistry.Registry
	ev    *mcptest.Events
	cfgs  []Config
	store *catalog.Store
}

func newLazyFleet(t testing.TB, n int, startup string) *lazyFleet {
	t.Helper()
	dir := t.TempDir()
	f := &lazyFleet{ev: mcptest.NewEvents(t, nil)}
	var err error
	if f.store, err = catalog.Open(catalog.Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	cached := make([]*mcp.Tool, 0, len(mcptest.StdioTools))
	for _, name := range mcptest.StdioTools {
		cached = append(cached, &mcp.Tool{Name: name, Description: "the test server's " + name,
			InputSchema: map[string]any{"type": "object"}})
	}
	for i := range n {
		cfg := stdioConfig(t, mcptest.Normal)
		cfg.ServerName = fmt.Sprintf("s%02d", i)
		cfg.Env[mcptest.EventsEnv] = f.ev.Path()
		cfg.Env[mcptest.LabelEnv] = cfg.ServerName
		cfg.Startup = startup
		hash, err := configHash(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.store.Save(cfg.ServerName, &catalog.Server{ConfigHash: hash, Tools: cached}); err != nil {
			t.Fatal(err)
		}
		f.cfgs = append(f.cfgs, cfg)
	}
	f.root = ctx.New(ctx.Options{Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { _ = f.root.Scope().Dispose(context.Background()) })
	if _, err := f.root.Plugin(toolregistry.Plugin, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := catalog.Key.Provide(f.root, f.store); err != nil {
		t.Fatal(err)
	}
	if err := f.root.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.reg, _ = toolregistry.Key.Get(f.root)
	return f
}

// mount mounts cfg's client and waits for its activation.
func (f *lazyFleet) mount(t testing.TB, cfg Config) *ctx.Scope {
	s, err := f.root.Plugin(Plugin, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

func (f *lazyFleet) call(t testing.TB, server, tool, args string) *toolregistry.Result {
	res, err := f.reg.Execute(f.root, f.root, "mcp__"+server+"__"+tool, []byte(args), toolregistry.ExecOptions{})
	if err != nil {
		t.Fatalf("%s %s: %v", server, tool, err)
	}
	return res
}

// A fleet of 50 lazy servers with caches starts no process until one is used: every
// server's cached tools are registered, and the first call of one server's tool starts that
// server, and only that one.
func TestLazyFleetStartsNothing(t *testing.T) {
	f := newLazyFleet(t, fleetSize, StartupLazy)
	st := recordStatus(t, f.root)
	for _, cfg := range f.cfgs {
		f.mount(t, cfg)
	}
	if err := f.root.Settle(t.Context()); err != nil {
		t.Fatal(err)
	}
	lazy := 0
	for _, cfg := range f.cfgs {
		if s, ok := last(st.all(), cfg.ServerName); ok && s.Phase == PhaseLazy {
			lazy++
		}
	}
	if n := len(f.reg.List(f.root)); lazy != fleetSize || n != fleetSize*len(mcptest.StdioTools) {
		t.Fatalf("%d of %d servers lazy, %d tools registered", lazy, fleetSize, n)
	}
	if n := f.ev.Count(0, "start"); n != 0 {
		t.Fatalf("%d server processes started before any call", n)
	}
	if got := f.call(t, "s07", "whoami", `{}`).Text(); !strings.HasPrefix(got, "s07 pid=") {
		t.Fatalf("whoami of s07: %q", got)
	}
	f.ev.Wait(t, 0, "start") // the report may trail the answer
	if n := f.ev.Count(0, "start"); n != 1 {
		t.Fatalf("%d server processes started by one call, want 1", n)
	}
	var connected []string
	for _, cfg := range f.cfgs {
		if s, ok := last(st.all(), cfg.ServerName); ok && s.Phase == PhaseConnected {
			connected = append(connected, cfg.ServerName)
		}
	}
	if !slices.Equal(connected, []string{"s07"}) {
		t.Errorf("connected servers %v", connected)
	}
}

// BenchmarkLazyFirstCall compares a lazy server's first call (mounted from its cache: the
// call starts the process, connects, lists and calls) with an eager server's mount plus one
// call (the same start, then the call), one fresh client of each per iteration, in
// alternating order so that both see the same load. It reports the medians and the lazy
// path's overhead ("overhead-ms": lazy first call minus eager start-and-call), and the
// time to mount a fleet of 50 lazy servers from their caches.
//
//	go test -run '^$' -bench 'BenchmarkLazyFirstCall' -benchtime 20x ./plugins/mcpclient
func BenchmarkLazyFirstCall(b *testing.B) {
	f := newLazyFleet(b, 1, StartupLazy)
	lazyCfg := f.cfgs[0]
	eagerCfg := lazyCfg
	eagerCfg.Startup = StartupEager
	var lazy, eager []time.Duration
	run := func(cfg Config, into *[]time.Duration) {
		begin := time.Now()
		s := f.mount(b, cfg)
		f.call(b, cfg.ServerName, "echo", `{"text":"x"}`)
		*into = append(*into, time.Since(begin))
		mustNil(b, s.Dispose(context.Background()))
	}
	benchtest.Alternate(b, func() { run(eagerCfg, &eager) }, func() { run(lazyCfg, &lazy) })
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	le, ee := benchtest.Median(lazy), benchtest.Median(eager)
	b.ReportMetric(ms(le), "lazy-first-call-ms")
	b.ReportMetric(ms(ee), "eager-start+call-ms")
	b.ReportMetric(ms(le-ee), "overhead-ms")

	fleet := newLazyFleet(b, fleetSize, StartupLazy)
	begin := time.Now()
	for _, cfg := range fleet.cfgs {
		if _, err := fleet.root.Plugin(Plugin, cfg); err != nil {
			b.Fatal(err)
		}
	}
	if err := fleet.root.Settle(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(ms(time.Since(begin)), "mount-50-lazy-ms")
	if n := fleet.ev.Count(0, "start"); n != 0 {
		b.Fatalf("%d processes started", n)
	}
}

func mustNil(b testing.TB, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}
