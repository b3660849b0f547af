package mcpclient

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/mcpclient/catalog"
)

// newCatalogEnv is an env with a catalog store in a temporary directory at its root (made
// first, so that it is removed after the tree is disposed).
func newCatalogEnv(t *testing.T) (*env, string, *catalog.Store) {
	t.Helper()
	dir := t.TempDir()
	e := newEnv(t)
	store, err := catalog.Open(catalog.Options{Dir: dir})
	must(t, err)
	if _, err := catalog.Key.Provide(e.root, store); err != nil {
		t.Fatal(err)
	}
	return e, dir, store
}

func lazyConfig(server string, idleMs int) Config {
	cfg := memConfig(server)
	cfg.Startup, cfg.IdleTimeoutMs = StartupLazy, idleMs
	return cfg
}

// dispose unloads a client's scope.
func dispose(t *testing.T, s *ctx.Scope) {
	t.Helper()
	if err := s.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
}

// lazyRig is a catalog env with an in-memory demo server and cfg, a lazy configuration
// "srv" of it (a test may change cfg before it mounts).
type lazyRig struct {
	*env
	dir   string
	store *catalog.Store
	ms    *memServer
	cfg   Config
}

func newLazyRig(t *testing.T, idleMs int) *lazyRig {
	t.Helper()
	e, dir, store := newCatalogEnv(t)
	return &lazyRig{env: e, dir: dir, store: store, ms: newMemServer(demo()), cfg: lazyConfig("srv", idleMs)}
}

// mountSrv mounts r.cfg on the root, dialling r.ms.
func (r *lazyRig) mountSrv() *ctx.Scope {
	return r.mount(nil, r.cfg, &hooks{dial: r.ms.dial, jitter: noJitter})
}

// hash is r.cfg's configuration hash.
func (r *lazyRig) hash(t *testing.T) string {
	t.Helper()
	hash, err := configHash(r.cfg)
	must(t, err)
	return hash
}

// mountCached mounts the lazy server once so that it fills the catalog and stops when idle,
// unloads it, and mounts it again: it comes up lazy, from the cache, without starting.
func (r *lazyRig) mountCached(t *testing.T) {
	t.Helper()
	sc := r.mountSrv()
	r.st.waitPhase(t, "srv", PhaseIdle)
	dispose(t, sc)
	r.mountSrv()
	r.st.waitPhase(t, "srv", PhaseLazy)
}

// mountWarned mounts the server, which must start (connect) and log warning.
func (r *lazyRig) mountWarned(t *testing.T, warning string) {
	t.Helper()
	r.mountSrv()
	r.st.waitPhase(t, "srv", PhaseConnected)
	if !strings.Contains(r.log.String(), warning) {
		t.Errorf("no warning %q:\n%s", warning, r.log.String())
	}
}

// The whole life of a lazy server: without a cache it starts once to fill it and stops
// when idle; mounted again it registers the cached tools without starting; the first call
// starts it; idle stops it again, keeping the tools; the next call starts it again.
func TestLazyServerLifecycle(t *testing.T) { synctest.Test(t, testLazyServerLifecycle) }

func testLazyServerLifecycle(t *testing.T) {
	e := newLazyRig(t, 5_000)
	ms := e.ms

	sc := e.mountSrv()
	e.st.waitPhase(t, "srv", PhaseConnected)
	synctest.Wait() // the catalog writer has written the entry
	entry, err := e.store.Load("srv", e.hash(t))
	if err != nil || len(entry.Tools) == 0 {
		t.Fatalf("catalog entry after the first start: %v, %+v", err, entry)
	}
	files, _ := filepath.Glob(filepath.Join(e.dir, "srv.*.json"))
	if len(files) != 1 {
		t.Fatalf("cache files %v", files)
	}
	if fi, err := os.Stat(files[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("cache file mode: %v %v", fi.Mode(), err)
	}
	begin := time.Now()
	idle := e.st.waitPhase(t, "srv", PhaseIdle)
	if d := time.Since(begin); d < 5*time.Second-time.Millisecond || d > 5*time.Second+time.Millisecond {
		t.Errorf("stopped after %v idle, want 5s", d)
	}
	if len(idle.Tools) == 0 || ms.open.Load() != 0 {
		t.Errorf("idle: tools %v, open connections %d", idle.Tools, ms.open.Load())
	}
	dispose(t, sc)

	// Mounted again: the cached tools, no start.
	dials := ms.dials.Load()
	sc = e.mountSrv()
	st := e.st.waitPhase(t, "srv", PhaseLazy)
	if !slices.Contains(st.Tools, "mcp__srv__echo") || !slices.Contains(e.names(nil), "mcp__srv__echo") {
		t.Fatalf("lazy tools %v, registry %v", st.Tools, e.names(nil))
	}
	synctest.Wait()
	if ms.dials.Load() != dials {
		t.Fatal("a lazy server with a cache was started at mount")
	}

	// The first call starts it and runs.
	if got := e.mustCall(nil, "mcp__srv__echo", `{"text":"hi"}`).Text(); !strings.Contains(got, "hi") {
		t.Errorf("first call: %q", got)
	}
	if ms.dials.Load() != dials+1 {
		t.Errorf("dials %d, want %d", ms.dials.Load(), dials+1)
	}
	e.st.waitPhase(t, "srv", PhaseIdle)
	if !slices.Contains(e.names(nil), "mcp__srv__echo") {
		t.Error("idle server lost its tools")
	}
	e.mustCall(nil, "mcp__srv__echo", `{"text":"again"}`)
	if ms.dials.Load() != dials+2 || ms.overlap.Load() {
		t.Errorf("dials %d (want %d), overlap %v", ms.dials.Load(), dials+2, ms.overlap.Load())
	}
	dispose(t, sc)
	if st := e.st.waitPhase(t, "srv", PhaseDisposed); st.Phase != PhaseDisposed {
		t.Fatal(st)
	}
}

// A call keeps the server: the idle time counts from the end of the last call.
func TestLazyIdleCountsFromLastCall(t *testing.T) { synctest.Test(t, testLazyIdleCountsFromLastCall) }

func testLazyIdleCountsFromLastCall(t *testing.T) {
	e := newLazyRig(t, 1_000)
	e.mountSrv()
	e.st.waitPhase(t, "srv", PhaseConnected)
	time.Sleep(900 * time.Millisecond) // the bubble's clock
	e.mustCall(nil, "mcp__srv__echo", `{"text":"x"}`)
	last := time.Now()
	e.st.waitPhase(t, "srv", PhaseIdle)
	if d := time.Since(last); d != time.Second {
		t.Errorf("stopped %v after the last call, want 1s", d)
	}
	if e.ms.dials.Load() != 1 {
		t.Errorf("dials %d", e.ms.dials.Load())
	}
}

// Concurrent first calls share one start.
func TestLazyConcurrentFirstCalls(t *testing.T) { synctest.Test(t, testLazyConcurrentFirstCalls) }

func testLazyConcurrentFirstCalls(t *testing.T) {
	e := newLazyRig(t, 1_000)
	e.mountCached(t)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { _, errs[i] = e.call(nil, "mcp__srv__echo", `{"text":"x"}`) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if e.ms.dials.Load() != 2 {
		t.Errorf("dials %d, want 2 (the fill, then one start for eight calls)", e.ms.dials.Load())
	}
}

// A start that fails is the call's error, naming the server and the cause; the cached
// tools stay, and the next call tries again.
func TestLazyStartFailure(t *testing.T) { synctest.Test(t, testLazyStartFailure) }

func testLazyStartFailure(t *testing.T) {
	e := newLazyRig(t, 1_000)
	e.cfg.Reconnect.Enabled = false
	e.mountCached(t)

	e.ms.failNext.Store(1)
	_, err := e.call(nil, "mcp__srv__echo", `{"text":"x"}`)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), `mcp server "srv" (startup: lazy) failed to start`) ||
		!strings.Contains(err.Error(), "connection refused (test)") {
		t.Fatalf("call error: %v", err)
	}
	if !slices.Contains(e.names(nil), "mcp__srv__echo") {
		t.Error("a failed lazy start removed the cached tools")
	}
	e.mustCall(nil, "mcp__srv__echo", `{"text":"x"}`)
}

// A cache file that is not a catalog is ignored with a warning: the server starts.
func TestLazyCorruptCache(t *testing.T) { synctest.Test(t, testLazyCorruptCache) }

func testLazyCorruptCache(t *testing.T) {
	e := newLazyRig(t, 1_000)
	file := filepath.Join(e.dir, "srv."+e.hash(t)[:16]+".json")
	must(t, os.WriteFile(file, []byte(`{"servers": {"srv": {"tools": [{"name": `), 0o600))
	e.mountWarned(t, "ignoring an unusable catalog cache file")
	synctest.Wait()
	if _, err := os.ReadFile(file); err != nil {
		t.Fatal(err)
	}
	if e.st.waitPhase(t, "srv", PhaseIdle); e.ms.dials.Load() != 1 {
		t.Errorf("dials %d", e.ms.dials.Load())
	}
}

// A cached tool whose schema does not compile (the file edited, or written by another
// version) is not registered with a looser schema: the cached list is refused and the
// server starts to list its tools afresh, which replaces the entry.
func TestLazyCachedSchemaRefused(t *testing.T) { synctest.Test(t, testLazyCachedSchemaRefused) }

func testLazyCachedSchemaRefused(t *testing.T) {
	e := newLazyRig(t, 1_000)
	bad := &mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": 7}}}}
	must(t, e.store.Save("srv", &catalog.Server{ConfigHash: e.hash(t), Tools: []*mcp.Tool{bad}}))
	e.mountWarned(t, "the cached catalog cannot be registered")
	e.mustCall(nil, "mcp__srv__echo", `{"text":"x"}`)
	synctest.Wait() // the catalog writer has written the server's own list
	entry, err := e.store.Load("srv", e.hash(t))
	must(t, err)
	if len(entry.Tools) < 2 {
		t.Errorf("the entry was not replaced by the server's list: %d tools", len(entry.Tools))
	}
}

// The configuration hash changes with what decides the lists, secrets included, and the
// cache never holds a secret.
func TestConfigHashAndNoSecrets(t *testing.T) { synctest.Test(t, testConfigHashAndNoSecrets) }

func testConfigHashAndNoSecrets(t *testing.T) {
	base := memConfig("srv")
	base.Env = map[string]string{"API_TOKEN": "s3cr3t-token-value"}
	h0, err := configHash(base)
	must(t, err)
	other := base
	other.Env = map[string]string{"API_TOKEN": "another-token"}
	h1, _ := configHash(other)
	timeout := base
	timeout.ToolCallTimeoutMs = 5
	h2, _ := configHash(timeout)
	if h0 == h1 || h0 != h2 {
		t.Errorf("hashes: base %s, other token %s, other timeout %s", h0, h1, h2)
	}

	e, dir, _ := newCatalogEnv(t)
	e.mount(nil, base, &hooks{dial: newMemServer(demo()).dial, jitter: noJitter})
	e.st.waitPhase(t, "srv", PhaseConnected)
	synctest.Wait()
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	data, _ := os.ReadFile(files[0])
	if strings.Contains(string(data), "s3cr3t") {
		t.Error("the cache holds the secret")
	}
}
