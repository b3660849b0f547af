// Package ctxtest makes tests of plugins short: a root that is disposed when the test ends,
// waits bounded by a test timeout, state assertions and event recorders.
package ctxtest

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cordisgo/harness/ctx"
)

// Timeout bounds every wait made by this package.
var Timeout = 10 * time.Second

// New returns a root whose logs are kept and printed if the test fails, and which is
// disposed (and settled) when the test ends.
//
// The disposal must be clean, or the test fails: the root's Dispose must return no error
// (no disposer of the tree failed or panicked, no child scope's disposal ran out of time),
// finish within [Timeout] (the disposers' deadline), leave the tree settled and no scope
// behind that was never disposed.
// A test that disposes dirty on purpose says so with [ExpectDirtyDispose].
func New(t testing.TB) *ctx.Context {
	root, _ := NewLogged(t)
	return root
}

// NewLogged is [New] that also returns the root's log.
func NewLogged(t testing.TB) (*ctx.Context, *Log) {
	t.Helper()
	l := &Log{}
	root := ctx.New(ctx.Options{Logger: slog.New(l.handler())})
	t.Cleanup(func() {
		cx, cancel := context.WithTimeout(context.Background(), Timeout)
		defer cancel()
		var dirty []string
		if err := root.Scope().Dispose(cx); err != nil {
			dirty = append(dirty, fmt.Sprintf("root dispose: %v", err))
		}
		if err := root.Settle(cx); err != nil {
			dirty = append(dirty, fmt.Sprintf("settle after dispose: %v", err))
		}
		if st := root.Scope().State(); st != ctx.Disposed {
			dirty = append(dirty, fmt.Sprintf("the root is %v after its disposal", st))
		}
		if n := root.Registry().Len(); n > 0 {
			dirty = append(dirty, fmt.Sprintf("scopes of %d plugin definitions leaked: never disposed", n))
		}
		if len(dirty) > 0 {
			if reason, ok := expectDirty.Load(t); ok {
				t.Logf("ctxtest: dirty dispose expected (%s):\n%s", reason, strings.Join(dirty, "\n"))
			} else {
				t.Errorf("ctxtest: the tree did not dispose cleanly (use ctxtest.ExpectDirtyDispose if the test means it):\n%s", strings.Join(dirty, "\n"))
			}
		}
		if t.Failed() {
			t.Logf("root log:\n%s", l.String())
		}
	})
	return root, l
}

// expectDirty holds the tests that called ExpectDirtyDispose, with their reasons. Entries
// are never removed: a root's cleanup may run after every other cleanup of its test.
var expectDirty sync.Map // testing.TB → string

// ExpectDirtyDispose declares that the roots t made with [New] or [NewLogged] are expected not
// to dispose cleanly (a disposer fails on purpose, a scope is left hanging to test a
// timeout, ...): what would fail the test is logged instead. reason says why and must not be
// empty. It may be called at any point of the test.
func ExpectDirtyDispose(t testing.TB, reason string) {
	t.Helper()
	if reason == "" {
		t.Fatal("ctxtest: ExpectDirtyDispose needs a reason")
	}
	expectDirty.Store(t, reason)
}

// Wait returns a context bounded by [Timeout], cancelled when the test ends.
func Wait(t testing.TB) context.Context {
	cx, cancel := context.WithTimeout(context.Background(), Timeout)
	t.Cleanup(cancel)
	return cx
}

// Settle waits for c's tree to become quiet and fails the test if it does not within
// [Timeout].
func Settle(t testing.TB, c *ctx.Context) {
	t.Helper()
	if err := c.Settle(Wait(t)); err != nil {
		t.Fatalf("ctxtest: tree did not settle: %v", err)
	}
}

// Mount mounts def on c with config and returns the scope; it fails the test if the mount is
// refused.
func Mount(t testing.TB, c *ctx.Context, def ctx.PluginDef, config any) *ctx.Scope {
	t.Helper()
	s, err := c.Plugin(def, config)
	if err != nil {
		t.Fatalf("ctxtest: mount %s: %v", def.Name(), err)
	}
	return s
}

// MountActive mounts def, settles the tree and asserts the scope is active.
func MountActive(t testing.TB, c *ctx.Context, def ctx.PluginDef, config any) *ctx.Scope {
	t.Helper()
	s := Mount(t, c, def, config)
	Settle(t, c)
	RequireState(t, s, ctx.Active)
	return s
}

// MountService mounts def as [MountActive] does and returns the service it provides under
// key, as c sees it; it fails the test if there is none.
func MountService[T any](t testing.TB, c *ctx.Context, def ctx.PluginDef, config any, key ctx.Key[T]) T {
	t.Helper()
	MountActive(t, c, def, config)
	v, ok := key.Get(c)
	if !ok {
		t.Fatalf("ctxtest: %s provides no %s service", def.Name(), key.Name())
	}
	return v
}

// Layer defines a plugin called name whose scope is a layer ([ctx.Context.Layered]) with
// children mounted in it without configuration: an agent scope, for tests of what a layer
// sees.
func Layer(name string, children ...ctx.PluginDef) ctx.PluginDef {
	return ctx.Define(ctx.Meta{Name: name}, func(c *ctx.Context, _ struct{}) error {
		layer := c.Layered()
		for _, ch := range children {
			if _, err := layer.Plugin(ch, nil); err != nil {
				return err
			}
		}
		return nil
	})
}

// Only returns the one scope of def in c's tree; it fails the test unless there is exactly
// one.
func Only(t testing.TB, c *ctx.Context, def ctx.PluginDef) *ctx.Scope {
	t.Helper()
	ss := c.Registry().Scopes(def)
	if len(ss) != 1 {
		t.Fatalf("ctxtest: %d scopes of %s, want 1", len(ss), def.Name())
	}
	return ss[0]
}

// RequireState fails the test unless s is in state want.
func RequireState(t testing.TB, s *ctx.Scope, want ctx.State) {
	t.Helper()
	if got := s.State(); got != want {
		t.Fatalf("ctxtest: %s is %v, want %v (err: %v)", s, got, want, s.Err())
	}
}

// Recorder collects the arguments of an event, in dispatch order.
//
// A Recorder is safe for concurrent use.
type Recorder[A any] struct {
	mu     sync.Mutex
	events []A
	wake   *ctx.Waker
}

// Record registers a recorder for ev on c.
func Record[A any](t testing.TB, c *ctx.Context, ev ctx.Event[A]) *Recorder[A] {
	t.Helper()
	r := &Recorder[A]{}
	wake, err := ev.Wake(c, func(a A) bool {
		r.mu.Lock()
		r.events = append(r.events, a)
		r.mu.Unlock()
		return true
	})
	if err != nil {
		t.Fatalf("ctxtest: record %s: %v", ev.Name(), err)
	}
	r.wake = wake
	return r
}

// Events returns a copy of what was recorded so far.
func (r *Recorder[A]) Events() []A {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// Reset forgets what was recorded.
func (r *Recorder[A]) Reset() {
	r.mu.Lock()
	r.events = nil
	r.mu.Unlock()
}

// WaitFor waits until pred holds for the recorded events, failing the test after [Timeout].
func (r *Recorder[A]) WaitFor(t testing.TB, pred func([]A) bool) []A {
	t.Helper()
	deadline := time.NewTimer(Timeout)
	defer deadline.Stop()
	for {
		if ev := r.Events(); pred(ev) {
			return ev
		}
		select {
		case <-r.wake.C():
		case <-deadline.C:
			ev := r.Events()
			if len(ev) == 0 {
				t.Fatalf("ctxtest: condition not reached; nothing recorded")
			}
			t.Fatalf("ctxtest: condition not reached; recorded %d events, the last: %+v", len(ev), ev[len(ev)-1])
		}
	}
}

// Transitions records the state transitions of one scope (or of all scopes when s is nil)
// as a list of states entered.
func Transitions(t testing.TB, c *ctx.Context, s *ctx.Scope) *StateLog {
	t.Helper()
	l := &StateLog{}
	if _, err := ctx.StatusChanged.On(c, func(ch ctx.StatusChange) error {
		if s == nil || ch.Scope == s {
			l.mu.Lock()
			l.states = append(l.states, ch.New)
			l.mu.Unlock()
		}
		return nil
	}); err != nil {
		t.Fatalf("ctxtest: transitions: %v", err)
	}
	return l
}

// StateLog is a list of states entered, recorded by [Transitions].
//
// A StateLog is safe for concurrent use.
type StateLog struct {
	mu     sync.Mutex
	states []ctx.State
}

// States returns the states entered so far.
func (l *StateLog) States() []ctx.State {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.states)
}

// Log keeps the records of a root's logger.
//
// A Log is safe for concurrent use.
type Log struct {
	mu      sync.Mutex
	records []slog.Record
	buf     bytes.Buffer
}

func (l *Log) handler() slog.Handler { return &logHandler{l: l} }

// Records returns the records at or above level.
func (l *Log) Records(level slog.Level) []slog.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []slog.Record
	for _, r := range l.records {
		if r.Level >= level {
			out = append(out, r)
		}
	}
	return out
}

// String returns the whole log as text.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

type logHandler struct {
	l     *Log
	attrs []slog.Attr
	group string
}

func (h *logHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *logHandler) Handle(cx context.Context, r slog.Record) error {
	r = r.Clone()
	r.AddAttrs(h.attrs...)
	h.l.mu.Lock()
	defer h.l.mu.Unlock()
	h.l.records = append(h.l.records, r)
	return slog.NewTextHandler(&h.l.buf, &slog.HandlerOptions{Level: slog.LevelDebug}).Handle(cx, r)
}

func (h *logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &logHandler{l: h.l, attrs: append(slices.Clone(h.attrs), as...), group: h.group}
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	return &logHandler{l: h.l, attrs: h.attrs, group: name}
}
