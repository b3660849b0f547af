package mcpmanager

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/testkit/mcptest"
)

// Port of manager.spec "refresh remounts": restart replaces the process.
func TestRestart(t *testing.T) {
	settings := "servers:\n" + stdioEntry(t, "a", "normal", "") + stdioEntry(t, "off", "normal", "enabled: false") +
		stdioEntry(t, "unset", "normal", "args: [\"${MCPM_RESTART_VAR}\"]")
	h := newHost(t, hostOptions{settings: &settings})
	h.waitStatus(StateConnected, "a")
	pid := h.whoami("a")
	if err := h.m.Restart(ctxtest.Wait(t), "a"); err != nil {
		t.Fatal(err)
	}
	snap := h.waitStatus(StateConnected, "a")
	if v, _ := find(snap, "a"); v.Starts != 2 || v.Attempt != 0 {
		t.Fatalf("a after restart: %s", dump(v))
	}
	if h.whoami("a") == pid {
		t.Fatal("restart kept the process")
	}
	if err := h.m.Restart(ctxtest.Wait(t), "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown: %v", err)
	}
	if err := h.m.Restart(ctxtest.Wait(t), "off"); !errors.Is(err, ErrConflict) {
		t.Fatalf("disabled: %v", err)
	}
	// A failed resolution is retried by a restart.
	h.waitStatus(StateFailed, "unset")
	t.Setenv("MCPM_RESTART_VAR", "x")
	if err := h.m.Restart(ctxtest.Wait(t), "unset"); err != nil {
		t.Fatal(err)
	}
	h.waitStatus(StateConnected, "unset")
}

// Probes test an entry without touching the live instance, disabled entries included.
func TestProbe(t *testing.T) {
	t.Parallel()
	settings := "servers:\n" + stdioEntry(t, "live", "normal", "") + stdioEntry(t, "off", "normal", "enabled: false") +
		stdioEntry(t, "unset", "normal", "args: [\"${MCPM_PROBE_UNSET}\"]") + stdioEntry(t, "hang", "hang", "enabled: false")
	h := newHost(t, hostOptions{settings: &settings})
	h.waitStatus(StateConnected, "live")
	pid := h.whoami("live")

	res, err := h.m.Probe(ctxtest.Wait(t), "live", ProbeOptions{})
	if err != nil || !res.OK() || res.Name != "live" || res.Source != SourceSettings {
		t.Fatalf("probe live: %v %s", err, dump(res))
	}
	if h.whoami("live") != pid {
		t.Fatal("the probe touched the live instance")
	}
	if v, _ := find(h.m.Snapshot(), "live"); v.Starts != 1 {
		t.Fatalf("live starts %d", v.Starts)
	}

	res, err = h.m.Probe(ctxtest.Wait(t), "off", ProbeOptions{MaxTools: 1})
	if err != nil || !res.OK() {
		t.Fatalf("probe disabled: %v %s", err, dump(res))
	}
	if len(res.Tools) != 1 || !res.ToolsTruncated || res.Tools[0].Name != "mcp__off__"+mcptest.StdioTools[0] ||
		res.Transport != mcpclient.TransportStdio || res.ServerName != "mcpm-test" ||
		res.Cleanup.Outcome != mcpclient.CleanupClosed || res.Timings.Total <= 0 || res.Timings.Connect <= 0 {
		t.Fatalf("probe disabled: %s", dump(res))
	}
	if v, _ := find(h.m.Snapshot(), "off"); v.Status != StateDisabled || v.Starts != 0 {
		t.Fatalf("probing started the disabled entry: %s", dump(v))
	}

	res, err = h.m.Probe(ctxtest.Wait(t), "unset", ProbeOptions{})
	if err != nil || res.Stage != ProbeResolve || !strings.Contains(res.Err, "${MCPM_PROBE_UNSET}") {
		t.Fatalf("probe unresolvable: %v %s", err, dump(res))
	}

	// The budget bounds a server that never answers: it fails at initialize, not cancelled.
	res, err = h.m.Probe(ctxtest.Wait(t), "hang", ProbeOptions{BudgetMs: 300})
	if err != nil || res.Stage != mcpclient.ProbeInitialize || res.Cancelled || !strings.Contains(res.Err, "budget") {
		t.Fatalf("probe hang: %v %s", err, dump(res))
	}

	if _, err := h.m.Probe(ctxtest.Wait(t), "nope", ProbeOptions{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown: %v", err)
	}
	for _, o := range []ProbeOptions{{BudgetMs: -1}, {MaxTools: -2}, {MaxDescriptionBytes: 1 << 30}} {
		if _, err := h.m.Probe(ctxtest.Wait(t), "live", o); !errors.Is(err, ErrBadRequest) {
			t.Fatalf("options %+v: %v", o, err)
		}
	}
}

// A restart cancels a running probe of its server and waits for the probe's cleanup before
// it replaces the instance.
func TestRestartDuringProbe(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 1)
	var returned atomic.Bool
	probe := func(cx context.Context, cfg mcpclient.Config, o ProbeOptions) mcpclient.ProbeResult {
		started <- struct{}{}
		defer returned.Store(true)
		return clientProbe(cx, cfg, o)
	}
	settings := "servers:\n" + stdioEntry(t, "h", "hang", "")
	h := newHost(t, hostOptions{settings: &settings, hooks: &hooks{probe: probe}})
	type outcome struct {
		res ProbeResult
		err error
	}
	// Probes are refused while the instance is being mounted: wait for the mount.
	h.waitSnap("h mounted", func(s Snapshot) bool { v, _ := find(s, "h"); return !v.StartedAt.IsZero() })
	done := make(chan outcome, 1)
	go func() {
		res, err := h.m.Probe(context.Background(), "h", ProbeOptions{})
		done <- outcome{res, err}
	}()
	select {
	case <-started:
	case o := <-done:
		t.Fatalf("probe ended before it started: %v %s", o.err, dump(o.res))
	}
	if err := h.m.Restart(ctxtest.Wait(t), "h"); err != nil {
		t.Fatal(err)
	}
	if !returned.Load() {
		t.Fatal("restart replaced the instance before the probe finished")
	}
	o := <-done
	if o.err != nil || !o.res.Cancelled || o.res.OK() || !strings.Contains(o.res.Err, errEntryChanged.Error()) ||
		o.res.Cleanup.Outcome != mcpclient.CleanupClosed {
		t.Fatalf("probe: %v %s", o.err, dump(o.res))
	}
	if v, _ := find(h.m.Snapshot(), "h"); v.Starts != 2 {
		t.Fatalf("h: %s", dump(v))
	}
}

// blockingProbe blocks until its context ends and reports why.
func blockingProbe(started chan<- struct{}) func(context.Context, mcpclient.Config, ProbeOptions) mcpclient.ProbeResult {
	return func(cx context.Context, _ mcpclient.Config, _ ProbeOptions) mcpclient.ProbeResult {
		started <- struct{}{}
		<-cx.Done()
		return mcpclient.ProbeResult{Stage: mcpclient.ProbeConnect, Err: context.Cause(cx).Error(),
			Cleanup: mcpclient.ProbeCleanup{Outcome: mcpclient.CleanupClosed}}
	}
}

// A probe is cancelled by a change of its entry (even a disabled one), by its caller and by
// the manager's disposal; a change of another entry leaves it alone.
func TestProbeCancellation(t *testing.T) {
	t.Parallel()
	fc := newFakeClients()
	started := make(chan struct{}, 1)
	settings := "servers:\n" + fakeEntry("p", "enabled: false") + fakeEntry("other", "")
	h := newHost(t, hostOptions{settings: &settings, hooks: &hooks{client: fc.def, probe: blockingProbe(started)}})
	h.waitStatus(StateConnected, "other")

	run := func(cx context.Context) chan ProbeResult {
		out := make(chan ProbeResult, 1)
		errs := make(chan error, 1)
		go func() {
			res, err := h.m.Probe(cx, "p", ProbeOptions{})
			if err != nil {
				errs <- err
				return
			}
			out <- res
		}()
		select {
		case <-started:
		case err := <-errs:
			t.Fatalf("probe: %v", err)
		}
		return out
	}

	// By a configuration change of the entry.
	out := run(context.Background())
	h.write("servers:\n" + fakeEntry("p", "enabled: false") + fakeEntry("other", "args: [changed]"))
	h.waitSnap("other changed", func(s Snapshot) bool {
		v, ok := find(s, "other")
		return ok && v.Starts == 2 && v.Status == StateConnected
	})
	select {
	case res := <-out:
		t.Fatalf("a change of another entry cancelled the probe: %s", dump(res))
	default:
	}
	h.write("servers:\n" + fakeEntry("p", "enabled: false\nargs: [changed]") + fakeEntry("other", "args: [changed]"))
	if res := <-out; !res.Cancelled || !strings.Contains(res.Err, errEntryChanged.Error()) {
		t.Fatalf("entry change: %s", dump(res))
	}

	// By the caller.
	cx, cancel := context.WithCancel(context.Background())
	out = run(cx)
	cancel()
	if res := <-out; !res.Cancelled || !strings.Contains(res.Err, "canceled") {
		t.Fatalf("caller: %s", dump(res))
	}

	// By the manager's disposal.
	out = run(context.Background())
	if err := h.scope.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	if res := <-out; !res.Cancelled {
		t.Fatalf("disposal: %s", dump(res))
	}
	if _, err := h.m.Probe(context.Background(), "p", ProbeOptions{}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("probe after disposal: %v", err)
	}
}

// An instance whose cleanup is incomplete blocks its name: no replacement until the host
// restarts, and every view says so. The incomplete cleanup is provoked through the client's
// status report (a real process group that cannot be confirmed gone needs an unkillable
// process): the fake client reports it, and returns ErrCleanupIncomplete, when disposed.
func TestCleanupIncompleteGate(t *testing.T) {
	t.Parallel()
	fc := newFakeClients()
	fc.incomplete["gate"] = true
	h := fakeHost(t, fc, hostOptions{}, "gate", "fine")

	err := h.m.Restart(ctxtest.Wait(t), "gate")
	if !errors.Is(err, ErrCleanupIncomplete) || !errors.Is(err, ErrConflict) {
		t.Fatalf("restart: %v", err)
	}
	snap := h.waitStatus(StateCleanupIncomplete, "gate")
	if v, _ := find(snap, "gate"); !strings.Contains(v.Error, "until the host restarts") {
		t.Fatalf("gate: %s", dump(v))
	}
	if n := fc.count(fc.mounted, "gate"); n != 1 {
		t.Fatalf("gate mounted %d times: the replacement was not refused", n)
	}
	if err := h.m.Restart(ctxtest.Wait(t), "gate"); !errors.Is(err, ErrCleanupIncomplete) {
		t.Fatalf("second restart: %v", err)
	}
	if _, err := h.m.Probe(ctxtest.Wait(t), "gate", ProbeOptions{}); !errors.Is(err, ErrCleanupIncomplete) {
		t.Fatalf("probe: %v", err)
	}

	// Changing the entry does not mount it either.
	h.write("servers:\n" + fakeEntry("gate", "args: [v2]") + fakeEntry("fine", ""))
	h.waitSnap("changed entry applied", func(s Snapshot) bool {
		v, _ := find(s, "gate")
		return len(v.Config.Args) == 1 && v.Status == StateCleanupIncomplete
	})
	// Removing it leaves a retained record at the end of the list.
	h.write("servers:\n" + fakeEntry("fine", ""))
	snap = h.waitSnap("retained record", func(s Snapshot) bool { return slices.Equal(names(s), []string{"fine", "gate(removed)"}) })
	if v := snap.Servers[1]; v.Status != StateCleanupIncomplete || !v.Removed {
		t.Fatalf("retained: %s", dump(v))
	}
	// The name cannot be registered, and re-adding it mounts nothing.
	if _, err := h.m.Register(h.root, "gate", stdioConfig(t, "normal")); !errors.Is(err, ErrCleanupIncomplete) {
		t.Fatalf("register: %v", err)
	}
	h.write("servers:\n" + fakeEntry("fine", "") + fakeEntry("gate", ""))
	snap = h.waitSnap("re-added", func(s Snapshot) bool { return slices.Equal(names(s), []string{"fine", "gate"}) })
	if v, _ := find(snap, "gate"); v.Status != StateCleanupIncomplete {
		t.Fatalf("re-added: %s", dump(v))
	}
	if n := fc.count(fc.mounted, "gate"); n != 1 {
		t.Fatalf("gate mounted %d times", n)
	}
	if v, _ := find(snap, "fine"); v.Status != StateConnected || v.Starts != 1 {
		t.Fatalf("fine: %s", dump(v))
	}
}

// A live instance that reports an incomplete cleanup (its supervisor parked after a
// generation could not be closed) blocks its name at once.
func TestCleanupIncompleteReportedLive(t *testing.T) {
	t.Parallel()
	h := fakeHost(t, newFakeClients(), hostOptions{}, "a")
	h.m.mu.Lock()
	scope := h.m.records["a"].inst.scope
	h.m.mu.Unlock()
	sink{h.m}.ReportStatus(mcpclient.Status{Server: "a", Scope: scope, Phase: mcpclient.PhaseFailed, CleanupIncomplete: true,
		Err: "close: process group could not be confirmed gone"})
	h.waitStatus(StateCleanupIncomplete, "a")
	if err := h.m.Restart(ctxtest.Wait(t), "a"); !errors.Is(err, ErrCleanupIncomplete) {
		t.Fatalf("restart: %v", err)
	}
	// Reports from scopes the manager did not mount are ignored.
	sink{h.m}.ReportStatus(mcpclient.Status{Server: "a", Scope: h.root.Scope(), Phase: mcpclient.PhaseConnected})
	sink{h.m}.ReportStatus(mcpclient.Status{Server: "a", Phase: mcpclient.PhaseConnected})
	if v, _ := find(h.m.Snapshot(), "a"); v.Status != StateCleanupIncomplete {
		t.Fatalf("a: %s", dump(v))
	}
}

// Listeners of mcp-manager/status cannot block or break the manager: a panicking one is
// logged, a stuck one delays only later events, while operations and watch streams go on.
func TestStatusListenersIsolated(t *testing.T) {
	t.Parallel()
	h := fakeHost(t, newFakeClients(), hostOptions{}, "a")
	release := make(chan struct{})
	stuck := make(chan struct{}, 1)
	ctxtest.MountActive(t, h.root, ctx.Define(ctx.Meta{Name: "listeners"}, func(c *ctx.Context, _ struct{}) error {
		if _, err := StatusEvent.On(c, func(StatusChange) error { panic("listener panic") }); err != nil {
			return err
		}
		var calls atomic.Int32
		_, err := StatusEvent.On(c, func(StatusChange) error {
			if calls.Add(1) == 1 { // stuck on its first event only
				stuck <- struct{}{}
				<-release
			}
			return nil
		})
		return err
	}), nil)

	h.events.Reset()
	if err := h.m.Restart(ctxtest.Wait(t), "a"); err != nil {
		t.Fatal(err)
	}
	<-stuck // the stuck listener holds an event now
	for range 3 {
		if err := h.m.Restart(ctxtest.Wait(t), "a"); err != nil {
			t.Fatal(err)
		}
	}
	h.waitSnap("a restarted 4 times", func(s Snapshot) bool {
		v, _ := find(s, "a")
		return v.Starts == 5 && v.Status == StateConnected
	})
	release <- struct{}{}
	h.events.WaitFor(t, func(evs []StatusChange) bool {
		if len(evs) == 0 {
			return false
		}
		last := evs[len(evs)-1]
		return last.Status.Starts == 5 && last.Status.Status == StateConnected
	})
	if !strings.Contains(h.log.String(), "listener panic") {
		t.Fatal("the panicking listener was not logged")
	}
}

// Watch: the current list at once, then the whole list after changes; slow readers get the
// latest; cancelling ends only that stream; the manager's disposal ends them all.
func TestWatch(t *testing.T) {
	t.Parallel()
	h := fakeHost(t, newFakeClients(), hostOptions{}, "a")

	cx1, cancel1 := context.WithCancel(context.Background())
	defer cancel1()
	w1 := h.m.Watch(cx1)
	w2 := h.m.Watch(context.Background())
	first := <-w1
	if v, ok := find(first, "a"); !ok || v.Status != StateConnected || first.Version == 0 {
		t.Fatalf("first snapshot: %s", dump(first))
	}
	for range 5 {
		if err := h.m.Restart(ctxtest.Wait(t), "a"); err != nil {
			t.Fatal(err)
		}
	}
	// w1 is read until the publisher delivers the final state; w2 was offered every
	// snapshot w1 was, but never read: it holds one, the last.
	var final Snapshot
	for final = range w1 {
		if v, _ := find(final, "a"); v.Starts == 6 && v.Status == StateConnected {
			break
		}
	}
	h.m.mu.Lock()   // the publisher offers to every watcher under the lock: it is done now
	h.m.mu.Unlock() //nolint:staticcheck // SA2001: an intended barrier, see above
	if got := <-w2; got.Version != final.Version {
		t.Fatalf("slow reader got version %d, want the latest %d", got.Version, final.Version)
	}
	select {
	case s := <-w2:
		t.Fatalf("a snapshot without a change: %d", s.Version)
	default:
	}
	cancel1()
	for range w1 { // drained, then closed
	}
	h.write("servers:\n" + fakeEntry("a", "") + fakeEntry("b", ""))
	for s := range w2 {
		if _, ok := find(s, "b"); ok {
			break
		}
	}
	if err := h.scope.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	for range w2 {
	}
	if _, open := <-h.m.Watch(context.Background()); open {
		t.Fatal("watch after disposal")
	}
}

// Disposing the manager disposes every instance, ends registrations (their disposers return
// at once) and refuses further operations.
func TestManagerDispose(t *testing.T) {
	t.Parallel()
	fc := newFakeClients()
	settings := "servers:\n" + fakeEntry("a", "") + fakeEntry("b", "")
	h := newHost(t, hostOptions{settings: &settings, hooks: &hooks{client: fc.def}})
	d, err := h.m.Register(h.root, "r", stdioConfig(t, "normal"))
	if err != nil {
		t.Fatal(err)
	}
	h.waitStatus(StateConnected, "a", "b", "r")
	if err := h.scope.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b", "r"} {
		if fc.count(fc.live, n) != 0 {
			t.Fatalf("%s still live", n)
		}
	}
	if tools := h.tools(); len(tools) != 0 {
		t.Fatalf("tools left: %v", tools)
	}
	if err := d(ctxtest.Wait(t)); err != nil {
		t.Fatalf("registration disposer after the manager's disposal: %v", err)
	}
	if _, err := h.m.Register(h.root, "x", stdioConfig(t, "normal")); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("register: %v", err)
	}
	if err := h.m.Restart(ctxtest.Wait(t), "a"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("restart: %v", err)
	}
}

// The manager's unload disposes its instances in parallel: each instance's cleanup waits
// until every one of them has started.
func TestUnloadDisposesInParallel(t *testing.T) {
	t.Parallel()
	fc := newFakeClients()
	names := []string{"a", "b", "c"}
	var started atomic.Int32
	all := make(chan struct{})
	waitcx := ctxtest.Wait(t)
	fc.onDispose = func(string) {
		if started.Add(1) == int32(len(names)) {
			close(all)
		}
		select {
		case <-all:
		case <-waitcx.Done():
			t.Error("the instances were disposed one after another")
		}
	}
	h := fakeHost(t, fc, hostOptions{}, names...)
	if err := h.scope.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if fc.count(fc.live, n) != 0 {
			t.Fatalf("%s still live", n)
		}
	}
}

// The servers start however other plugins' StatusChanged listeners behave: the manager
// does not wait for its own activation in such a listener.
func TestStartIndependentOfStatusListeners(t *testing.T) {
	t.Parallel()
	fc := newFakeClients()
	bad := ctx.Define(ctx.Meta{Name: "bad-listener"}, func(c *ctx.Context, _ struct{}) error {
		_, err := ctx.StatusChanged.On(c, func(ctx.StatusChange) error { return errors.New("listener refuses") })
		return err
	})
	fakeHost(t, fc, hostOptions{before: bad}, "a")
}
