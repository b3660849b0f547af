package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/toolregistry"

	"github.com/cordisgo/harness/testkit/mcptest"
)

func phasesEqual(got []Phase, want ...Phase) bool { return slices.Equal(got, want) }

// TestReconnectAfterTransportLoss: a lost connection is replaced after the initial delay,
// calls fail fast meanwhile, the old generation is closed before the new one starts, and
// status says connecting, connected, reconnecting (1 of 5), connected.
func TestReconnectAfterTransportLoss(t *testing.T) { synctest.Test(t, testReconnectAfterTransportLoss) }

func testReconnectAfterTransportLoss(t *testing.T) {
	e := newEnv(t)
	ms := newMemServer(demo())
	cfg := memConfig("srv")
	cfg.Reconnect.MaxAttempts = 5
	e.mount(nil, cfg, &hooks{dial: ms.dial, jitter: noJitter})
	e.st.waitPhase(t, "srv", PhaseConnected)

	crashed := time.Now()
	ms.crash()
	st := e.st.waitPhase(t, "srv", PhaseReconnecting)
	if st.Attempt != 1 || st.MaxAttempts != 5 || !strings.Contains(st.Err, "closed the connection") {
		t.Errorf("reconnecting status %+v", st)
	}
	_, err := e.call(nil, "mcp__srv__echo", `{"text":"x"}`)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), `mcp server "srv" is reconnecting (attempt 1 of 5)`) {
		t.Fatalf("call while reconnecting: %v", err)
	}
	if !errors.Is(err, toolregistry.ErrToolError) {
		t.Errorf("not a tool error: %v", err)
	}
	e.st.waitPhase(t, "srv", PhaseConnected)
	if d := ms.dialTimes()[1].Sub(crashed); d != cfg.Reconnect.InitialDelay() {
		t.Errorf("first delay %v, want %v", d, cfg.Reconnect.InitialDelay())
	}
	if got := e.mustCall(nil, "mcp__srv__echo", `{"text":"back"}`).Text(); got != "back" {
		t.Errorf("echo after reconnect = %q", got)
	}
	if got := e.st.phases("srv"); !phasesEqual(got, PhaseConnecting, PhaseConnected, PhaseReconnecting, PhaseConnected) {
		t.Errorf("phases %v", got)
	}
	if ms.dials.Load() != 2 || ms.overlap.Load() {
		t.Errorf("dials %d, overlap %v", ms.dials.Load(), ms.overlap.Load())
	}
}

// TestBackoffAndGiveUp: delays double from initialDelay up to maxDelay; after maxAttempts
// failed retries the supervisor gives up, unregisters the tools and reports failed.
func TestBackoffAndGiveUp(t *testing.T) { synctest.Test(t, testBackoffAndGiveUp) }

func testBackoffAndGiveUp(t *testing.T) {
	e := newEnv(t)
	ms := newMemServer(demo())
	cfg := memConfig("srv")
	cfg.Reconnect.InitialDelayMs, cfg.Reconnect.MaxDelayMs, cfg.Reconnect.MaxAttempts = 100, 250, 3
	e.mount(nil, cfg, &hooks{dial: ms.dial, jitter: noJitter})
	e.st.waitPhase(t, "srv", PhaseConnected)
	if len(e.names(nil)) == 0 {
		t.Fatal("no tools")
	}
	ms.failNext.Store(100)
	crashed := time.Now()
	ms.crash()
	st := e.st.waitPhase(t, "srv", PhaseFailed)
	var delays []time.Duration
	for i, at := range ms.dialTimes()[1:] {
		delays = append(delays, at.Sub(crashed))
		crashed = ms.dialTimes()[i+1]
	}
	if want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 250 * time.Millisecond}; !slices.Equal(delays, want) {
		t.Errorf("delays %v, want %v", delays, want)
	}
	if st.Attempt != 3 || st.MaxAttempts != 3 || !strings.Contains(st.Err, "giving up after 3") || !strings.Contains(st.Err, "connection refused (test)") {
		t.Errorf("failed status %+v", st)
	}
	if names := e.names(nil); len(names) != 0 {
		t.Errorf("tools after give-up: %v", names)
	}
	if got := e.st.phases("srv"); !phasesEqual(got, PhaseConnecting, PhaseConnected,
		PhaseReconnecting, PhaseReconnecting, PhaseReconnecting, PhaseFailed) {
		t.Errorf("phases %v", got)
	}
	if n := ms.dials.Load(); n != 4 {
		t.Errorf("dials %d, want 1 + 3 retries", n)
	}
	requireNoRetry(t, ms)
}

// requireNoRetry lets a day pass in the bubble and fails if the supervisor dialled again:
// no retry timer is left.
func requireNoRetry(t *testing.T, ms *memServer) {
	t.Helper()
	synctest.Wait()
	before := ms.dials.Load()
	time.Sleep(24 * time.Hour)
	synctest.Wait()
	if n := ms.dials.Load(); n != before {
		t.Errorf("%d dials after the supervisor stopped", n-before)
	}
}

// TestBudgetResetsAfterStablePeriod: a connection that lived maxDelay closes the outage, so
// the next loss starts again at attempt 1; brief successes do not.
func TestBudgetResetsAfterStablePeriod(t *testing.T) {
	synctest.Test(t, testBudgetResetsAfterStablePeriod)
}

func testBudgetResetsAfterStablePeriod(t *testing.T) {
	e := newEnv(t)
	ms := newMemServer(demo())
	cfg := memConfig("srv")
	cfg.Reconnect.InitialDelayMs, cfg.Reconnect.MaxDelayMs, cfg.Reconnect.MaxAttempts = 100, 1000, 5
	e.mount(nil, cfg, &hooks{dial: ms.dial})
	e.st.waitPhase(t, "srv", PhaseConnected)

	attemptAfterCrash := func() int {
		t.Helper()
		ms.crash()
		st := e.st.waitPhase(t, "srv", PhaseReconnecting)
		e.st.waitPhase(t, "srv", PhaseConnected)
		return st.Attempt
	}
	if n := attemptAfterCrash(); n != 1 {
		t.Errorf("first outage: attempt %d", n)
	}
	if n := attemptAfterCrash(); n != 2 {
		t.Errorf("crash right after reconnecting: attempt %d, want 2 (same outage)", n)
	}
	time.Sleep(time.Second) // the bubble's clock: stable for maxDelay
	if n := attemptAfterCrash(); n != 1 {
		t.Errorf("crash after a stable period: attempt %d, want 1", n)
	}
}

// TestCleanupIncompleteStops: when the old generation cannot be confirmed closed the
// supervisor never starts another one, and says so.
func TestCleanupIncompleteStops(t *testing.T) { synctest.Test(t, testCleanupIncompleteStops) }

func testCleanupIncompleteStops(t *testing.T) {
	e := newEnv(t)
	ms := newMemServer(demo())
	ms.closeErr = fmt.Errorf("process group 42: %w", ErrCleanupIncomplete)
	e.mount(nil, memConfig("srv"), &hooks{dial: ms.dial})
	e.st.waitPhase(t, "srv", PhaseConnected)
	ms.crash()
	st := e.st.waitPhase(t, "srv", PhaseFailed)
	if !st.CleanupIncomplete || !strings.Contains(st.Err, "could not be confirmed gone") {
		t.Errorf("status %+v", st)
	}
	requireNoRetry(t, ms)
	if n := ms.dials.Load(); n != 1 {
		t.Errorf("dials %d: a new generation was started", n)
	}
	_, err := e.call(nil, "mcp__srv__echo", `{"text":"x"}`)
	if !errors.Is(err, toolregistry.ErrUnknownTool) {
		t.Errorf("tools still registered: %v", err)
	}
}

// TestStartupFailureRetriesInBackground: without failOnStartupError a failed first attempt
// activates the plugin with no tools; the tools appear when a retry succeeds.
func TestStartupFailureRetriesInBackground(t *testing.T) {
	synctest.Test(t, testStartupFailureRetriesInBackground)
}

func testStartupFailureRetriesInBackground(t *testing.T) {
	e := newEnv(t)
	ms := newMemServer(demo())
	ms.failNext.Store(1)
	s := e.mount(nil, memConfig("srv"), &hooks{dial: ms.dial})
	ctxtest.RequireState(t, s, ctx.Active)
	if names := e.names(nil); len(names) != 0 {
		t.Fatalf("tools before connecting: %v", names)
	}
	st := e.st.waitPhase(t, "srv", PhaseReconnecting)
	if st.Attempt != 1 || !strings.Contains(st.Err, "connection refused (test)") {
		t.Errorf("status %+v", st)
	}
	changed := ctxtest.Record(t, e.root, toolregistry.Changed)
	changed.WaitFor(t, func(ch []toolregistry.Change) bool { return len(ch) > 0 })
	if got := e.mustCall(nil, "mcp__srv__echo", `{"text":"late"}`).Text(); got != "late" {
		t.Errorf("echo %q", got)
	}
}

// TestFailOnStartupError: the first failure fails the scope with the server's name and the
// cause; nothing stays registered and the name is free again.
func TestFailOnStartupError(t *testing.T) {
	e := newEnv(t)
	ms := newMemServer(demo())
	ms.failNext.Store(1)
	cfg := memConfig("srv")
	cfg.FailOnStartupError = true
	s := e.mount(nil, cfg, &hooks{dial: ms.dial})
	ctxtest.RequireState(t, s, ctx.Failed)
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), `mcp server "srv": initial connection or tool discovery failed: `) ||
		!strings.Contains(err.Error(), "connection refused (test)") {
		t.Fatalf("load error %v", err)
	}
	if names := e.names(nil); len(names) != 0 {
		t.Errorf("tools %v", names)
	}
	if ms.dials.Load() != 1 {
		t.Errorf("dials %d", ms.dials.Load())
	}
	// The reservation went with the failed load.
	s2 := e.mount(nil, memConfig("srv"), &hooks{dial: newMemServer(demo()).dial})
	ctxtest.RequireState(t, s2, ctx.Active)
}

// blockingDial blocks until its context ends, signalling entered first.
func blockingDial(entered chan<- struct{}) dialFunc {
	return func(cx context.Context, cfg Config, _ dialOptions) (*connection, error) {
		entered <- struct{}{}
		<-cx.Done()
		return nil, connectError(cfg.ServerName, context.Cause(cx), "")
	}
}

// TestStartupTimeout: connect plus discovery is bounded by startupTimeoutMs.
func TestStartupTimeout(t *testing.T) { synctest.Test(t, testStartupTimeout) }

func testStartupTimeout(t *testing.T) {
	e := newEnv(t)
	cfg := memConfig("srv")
	cfg.StartupTimeoutMs = 30
	cfg.FailOnStartupError = true
	start := time.Now()
	s := e.mount(nil, cfg, &hooks{dial: blockingDial(make(chan struct{}, 10))})
	ctxtest.RequireState(t, s, ctx.Failed)
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "startup timed out after 30ms (startupTimeoutMs)") {
		t.Fatalf("load error %v", err)
	}
	if d := time.Since(start); d != 30*time.Millisecond {
		t.Errorf("failed after %v, want the startup timeout 30ms", d)
	}
}

// TestDisposeDuringConnect: disposing the scope while the first attempt runs aborts it and
// reports disposed.
func TestDisposeDuringConnect(t *testing.T) {
	e := newEnv(t)
	entered := make(chan struct{}, 1)
	c := e.root.With(hooksKey{}, &hooks{dial: blockingDial(entered)})
	s := ctxtest.Mount(t, c, Plugin, memConfig("srv"))
	<-entered
	if err := s.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	ctxtest.RequireState(t, s, ctx.Disposed)
	if got := e.st.phases("srv"); !phasesEqual(got, PhaseConnecting, PhaseDisposed) {
		t.Errorf("phases %v", got)
	}
}

// TestDisposeDuringBackoff: disposal cancels the pending retry.
func TestDisposeDuringBackoff(t *testing.T) { synctest.Test(t, testDisposeDuringBackoff) }

func testDisposeDuringBackoff(t *testing.T) {
	e := newEnv(t)
	ms := newMemServer(demo())
	s := e.mount(nil, memConfig("srv"), &hooks{dial: ms.dial})
	e.st.waitPhase(t, "srv", PhaseConnected)
	ms.failNext.Store(100)
	ms.crash()
	e.st.waitPhase(t, "srv", PhaseReconnecting)
	must(t, s.Dispose(ctxtest.Wait(t)))
	if got := e.st.phases("srv"); got[len(got)-1] != PhaseDisposed {
		t.Errorf("phases %v", got)
	}
	requireNoRetry(t, ms)
	if n := ms.dials.Load(); n != 1 {
		t.Errorf("dials %d", n)
	}
	if ms.open.Load() != 0 {
		t.Errorf("%d connections left open", ms.open.Load())
	}
}

// TestDisposeDuringCall: a call in flight when the client unloads ends promptly with an
// error, and the server sees its request end.
func TestDisposeDuringCall(t *testing.T) {
	e := newEnv(t)
	srv, ctl := mcptest.NewControlled("srv")
	started := make(chan struct{}, 1)
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(cx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && p.Name == "block" {
				started <- struct{}{}
			}
			return next(cx, method, req)
		}
	})
	ms := newMemServer(srv)
	s := e.mount(nil, memConfig("srv"), &hooks{dial: ms.dial})
	done := make(chan error, 1)
	go func() {
		_, err := e.call(nil, "mcp__srv__block", `{}`)
		// The in-memory server waits for its handler before its session ends.
		ctl.Release()
		done <- err
	}()
	<-started
	must(t, s.Dispose(ctxtest.Wait(t)))
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("call succeeded")
		}
	case <-time.After(ctxtest.Timeout):
		t.Fatal("call still running after dispose")
	}
}

// TestReconnectDisabled: a lost connection with reconnect off keeps the tools registered,
// failing fast, and reports failed.
func TestReconnectDisabled(t *testing.T) {
	e := newEnv(t)
	ms := newMemServer(demo())
	cfg := memConfig("srv")
	cfg.Reconnect.Enabled = false
	e.mount(nil, cfg, &hooks{dial: ms.dial})
	e.st.waitPhase(t, "srv", PhaseConnected)
	ms.crash()
	st := e.st.waitPhase(t, "srv", PhaseFailed)
	if !strings.Contains(st.Err, "connection lost and reconnect is disabled") {
		t.Errorf("status %+v", st)
	}
	_, err := e.call(nil, "mcp__srv__echo", `{"text":"x"}`)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "reconnect is disabled") {
		t.Errorf("call: %v", err)
	}
}

// panickySink is a status sink that panics.
type panickySink struct{}

func (panickySink) ReportStatus(Status) { panic("sink exploded") }

// TestStatusSinkPanicContained: a failing sink is logged and never disturbs the client.
func TestStatusSinkPanicContained(t *testing.T) {
	root, log := ctxtest.NewLogged(t)
	ctxtest.MountActive(t, root, toolregistry.Plugin, nil)
	_, err := StatusSinkKey.Provide(root, panickySink{})
	must(t, err)
	c := root.With(hooksKey{}, &hooks{dial: newMemServer(demo()).dial})
	ctxtest.MountActive(t, c, Plugin, memConfig("srv"))
	reg, _ := toolregistry.Key.Get(root)
	res, err := reg.Execute(root, root, "mcp__srv__echo", []byte(`{"text":"ok"}`), toolregistry.ExecOptions{})
	if err != nil || res.Text() != "ok" {
		t.Fatalf("echo: %v %v", res, err)
	}
	if !strings.Contains(log.String(), "status sink failed while reporting") {
		t.Errorf("no log of the sink failure:\n%s", log.String())
	}
}

// TestStatusReports: the connected report carries the server's identity, the negotiated
// protocol, the tool names and the instruction size; disposal reports last.
func TestStatusReports(t *testing.T) {
	e := newEnv(t)
	s := e.mount(nil, memConfig("srv"), &hooks{dial: newMemServer(demo()).dial})
	st := e.st.waitPhase(t, "srv", PhaseConnected)
	if st.ServerName != "harness-demo" || st.ServerVersion == "" || st.ProtocolVersion != DefaultStdioProtocolVersion ||
		st.Transport != "in-memory" || st.Scope != s || st.At.IsZero() {
		t.Errorf("status %+v", st)
	}
	if !slices.Contains(st.Tools, "mcp__srv__echo") || st.InstructionBytes == 0 {
		t.Errorf("tools %v, instruction bytes %d", st.Tools, st.InstructionBytes)
	}
	must(t, s.Dispose(ctxtest.Wait(t)))
	if got := e.st.phases("srv"); !phasesEqual(got, PhaseConnecting, PhaseConnected, PhaseDisposed) {
		t.Errorf("phases %v", got)
	}
}

// TestWorksWithoutSink: no status sink mounted changes nothing.
func TestWorksWithoutSink(t *testing.T) {
	root := ctxtest.New(t)
	ctxtest.MountActive(t, root, toolregistry.Plugin, nil)
	ctxtest.MountActive(t, root.With(hooksKey{}, &hooks{dial: newMemServer(demo()).dial}), Plugin, memConfig("srv"))
	reg, _ := toolregistry.Key.Get(root)
	if _, ok := reg.Lookup(root, "mcp__srv__echo"); !ok {
		t.Fatal("no echo tool")
	}
}

// TestStatusEvent: every report the sink receives is also emitted as StatusEvent, in the
// same order; a failing listener is logged and disturbs neither the client nor the sink.
func TestStatusEvent(t *testing.T) {
	e := newEnv(t)
	events := e.st // recorded from StatusEvent
	sink := &sliceSink{}
	_, err := StatusSinkKey.Provide(e.root, sink)
	must(t, err)
	_, err = StatusEvent.On(e.root, func(Status) error { panic("listener exploded") })
	must(t, err)
	s := e.mount(nil, memConfig("srv"), &hooks{dial: newMemServer(demo()).dial})
	st := events.waitPhase(t, "srv", PhaseConnected)
	if st.Scope != s || !slices.Contains(st.Tools, "mcp__srv__echo") {
		t.Errorf("event %+v", st)
	}
	must(t, s.Dispose(ctxtest.Wait(t)))
	want := []Phase{PhaseConnecting, PhaseConnected, PhaseDisposed}
	if got := events.phases("srv"); !phasesEqual(got, want...) {
		t.Errorf("event phases %v, want %v", got, want)
	}
	if got := phasesOf(sink.all(), "srv"); !phasesEqual(got, want...) {
		t.Errorf("sink phases %v, want %v", got, want)
	}
	if !strings.Contains(e.log.String(), "status listener failed") {
		t.Errorf("no log of the listener failure:\n%s", e.log.String())
	}
}

// sliceSink is a StatusSink that keeps every report.
type sliceSink struct {
	mu      sync.Mutex
	reports []Status
}

func (s *sliceSink) ReportStatus(st Status) {
	s.mu.Lock()
	s.reports = append(s.reports, st)
	s.mu.Unlock()
}

func (s *sliceSink) all() []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reports)
}

func noJitter(d time.Duration) time.Duration { return d }

// Reconnect delays are spread between 80 % and 120 % of the exponential backoff, never above
// maxDelayMs, so that servers lost together do not all come back at once.
func TestBackoffJitter(t *testing.T) {
	s := &supervisor{jitter: spread}
	s.cfg.Reconnect.InitialDelayMs, s.cfg.Reconnect.MaxDelayMs = 1000, 3000
	seen := map[time.Duration]bool{}
	for range 200 {
		for n, base := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second} {
			d := s.backoff(n + 1)
			if d < base*4/5 || d > min(base*6/5, 3*time.Second) {
				t.Fatalf("retry %d: delay %v outside [%v, %v]", n+1, d, base*4/5, min(base*6/5, 3*time.Second))
			}
			seen[d] = true
		}
	}
	if len(seen) < 100 {
		t.Errorf("only %d distinct delays in 800: not spread", len(seen))
	}
}
