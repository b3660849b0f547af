package ctx_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
)

func TestOnAndDispose(t *testing.T) {
	root := ctxtest.New(t)
	var n atomic.Int32
	d, err := ping.On(root, func(string) error { n.Add(1); return nil })
	if err != nil {
		t.Fatal(err)
	}
	_ = ping.Emit(root, "a")
	_ = ping.Emit(root, "b")
	_ = d(ctxtest.Wait(t))
	_ = ping.Emit(root, "c")
	if n.Load() != 2 {
		t.Fatalf("called %d times", n.Load())
	}
}

func TestOnce(t *testing.T) {
	root := ctxtest.New(t)
	var n atomic.Int32
	d, err := ping.Once(root, func(string) error { n.Add(1); return nil })
	if err != nil {
		t.Fatal(err)
	}
	_ = ping.Emit(root, "a")
	_ = ping.Emit(root, "b")
	if n.Load() != 1 {
		t.Fatalf("called %d times", n.Load())
	}
	if err := d(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
}

func TestEmitOrderPrependAndStopOnError(t *testing.T) {
	root := ctxtest.New(t)
	var mu sync.Mutex
	var seen []string
	add := func(s string, err error) func(string) error {
		return func(string) error {
			mu.Lock()
			seen = append(seen, s)
			mu.Unlock()
			return err
		}
	}
	boom := errors.New("boom")
	_, _ = ping.On(root, add("a", nil))
	_, _ = ping.On(root, add("b", boom))
	_, _ = ping.On(root, add("c", nil))
	_, _ = ping.On(root, add("first", nil), ctx.Prepend)
	if err := ping.Emit(root, "x"); !errors.Is(err, boom) {
		t.Fatalf("emit error %v", err)
	}
	if !slices.Equal(seen, []string{"first", "a", "b"}) {
		t.Fatalf("order %v", seen)
	}
	seen = nil
	if err := ping.Parallel(root, "x"); !errors.Is(err, boom) {
		t.Fatalf("parallel error %v", err)
	}
	slices.Sort(seen)
	if !slices.Equal(seen, []string{"a", "b", "c", "first"}) {
		t.Fatalf("parallel must call every listener: %v", seen)
	}
}

func TestParallelJoinsErrorsAndPanics(t *testing.T) {
	root := ctxtest.New(t)
	e1 := errors.New("one")
	_, _ = ping.On(root, func(string) error { return e1 })
	_, _ = ping.On(root, func(string) error { panic("two") })
	err := ping.Parallel(root, "x")
	var pe *ctx.PanicError
	if !errors.Is(err, e1) || !errors.As(err, &pe) {
		t.Fatalf("joined error %v", err)
	}
	if err := ping.Emit(root, "x"); !errors.Is(err, e1) {
		t.Fatalf("emit %v", err)
	}
}

var ask = ctx.NewBail[int, string]("test/ask")

func TestSerialBail(t *testing.T) {
	root := ctxtest.New(t)
	var calls []int
	_, _ = ask.On(root, func(n int) (string, bool, error) { calls = append(calls, 1); return "", false, nil })
	_, _ = ask.On(root, func(n int) (string, bool, error) {
		calls = append(calls, 2)
		if n == 0 {
			return "", true, nil // an explicit ok: the zero value bails too
		}
		return "", false, nil
	})
	_, _ = ask.On(root, func(n int) (string, bool, error) { calls = append(calls, 3); return "three", true, nil })
	if r, ok, err := ask.Serial(root, 0); err != nil || !ok || r != "" {
		t.Fatalf("got %q %v %v", r, ok, err)
	}
	if !slices.Equal(calls, []int{1, 2}) {
		t.Fatalf("calls %v", calls)
	}
	if r, ok, _ := ask.Serial(root, 1); !ok || r != "three" {
		t.Fatalf("got %q %v", r, ok)
	}
	boom := errors.New("boom")
	_, _ = ask.On(root, func(int) (string, bool, error) { return "", false, boom }, ctx.Prepend)
	if _, _, err := ask.Serial(root, 1); !errors.Is(err, boom) {
		t.Fatalf("error %v", err)
	}
}

var sum = ctx.NewChain[int, int]("test/sum")

func TestWaterfall(t *testing.T) {
	root := ctxtest.New(t)
	plus := func(k int) func(int, func() (int, error)) (int, error) {
		return func(a int, next func() (int, error)) (int, error) {
			v, err := next()
			return v + k, err
		}
	}
	_, _ = sum.On(root, plus(1))
	_, _ = sum.On(root, plus(2))
	got, err := sum.Waterfall(root, 0, func() (int, error) { return 1, nil })
	if err != nil || got != 4 {
		t.Fatalf("1+1+2: got %d %v", got, err)
	}
	var fourth atomic.Bool
	_, _ = sum.On(root, func(int, func() (int, error)) (int, error) { return 3, nil })
	_, _ = sum.On(root, func(a int, next func() (int, error)) (int, error) { fourth.Store(true); return next() })
	got, _ = sum.Waterfall(root, 0, func() (int, error) { return 1, nil })
	if got != 6 || fourth.Load() {
		t.Fatalf("short circuit: got %d, fourth called %v", got, fourth.Load())
	}
}

func TestWaterfallListened(t *testing.T) {
	root := ctxtest.New(t)
	if sum.Listened(root) {
		t.Fatal("Listened with no listener")
	}
	off, err := sum.On(root, func(a int, next func() (int, error)) (int, error) { return next() })
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Listened(root) {
		t.Fatal("not Listened with a listener")
	}
	if err := off(context.Background()); err != nil {
		t.Fatal(err)
	}
	if sum.Listened(root) {
		t.Fatal("Listened after the listener was removed")
	}
}

func TestWaterfallNextOnce(t *testing.T) {
	root := ctxtest.New(t)
	var lastRuns atomic.Int32
	_, _ = sum.On(root, func(a int, next func() (int, error)) (int, error) {
		if _, err := next(); err != nil {
			return 0, err
		}
		return next()
	})
	_, err := sum.Waterfall(root, 0, func() (int, error) { lastRuns.Add(1); return 1, nil })
	if !errors.Is(err, ctx.ErrNextCalled) || lastRuns.Load() != 1 {
		t.Fatalf("err %v, last ran %d times", err, lastRuns.Load())
	}
	if got, err := sum.Waterfall(root, 7, nil); !errors.Is(err, ctx.ErrNextCalled) || got != 0 {
		t.Fatalf("nil last: %d %v", got, err)
	}
}

// Listeners added or removed during a dispatch do not affect it.
func TestDispatchSnapshot(t *testing.T) {
	root := ctxtest.New(t)
	var late atomic.Int32
	var d2 ctx.Disposer
	var second atomic.Int32
	_, _ = ping.On(root, func(string) error {
		_, _ = ping.On(root, func(string) error { late.Add(1); return nil })
		return d2(ctxtest.Wait(t))
	})
	d2, _ = ping.On(root, func(string) error { second.Add(1); return nil })
	_ = ping.Emit(root, "x")
	if late.Load() != 0 || second.Load() != 1 {
		t.Fatalf("late %d second %d", late.Load(), second.Load())
	}
}

// Scope-filtered dispatch: a Subtree listener admits only events from its own subtree.
func TestSubtreeListener(t *testing.T) {
	root := ctxtest.New(t)
	var mu sync.Mutex
	got := map[string][]string{}
	ctxs := map[string]*ctx.Context{}
	mk := func(name string, child ctx.PluginDef) ctx.PluginDef {
		return ctx.Define(ctx.Meta{Name: name}, func(c *ctx.Context, _ struct{}) error {
			mu.Lock()
			ctxs[name] = c
			mu.Unlock()
			if _, err := ping.On(c, func(from string) error {
				mu.Lock()
				got[name] = append(got[name], from)
				mu.Unlock()
				return nil
			}, ctx.Subtree); err != nil {
				return err
			}
			if child != nil {
				_, err := c.Plugin(child, nil)
				return err
			}
			return nil
		})
	}
	ctxtest.Mount(t, root, mk("agentA", mk("leafA", nil)), nil)
	ctxtest.Mount(t, root, mk("agentB", nil), nil)
	ctxtest.Settle(t, root)
	for _, from := range []string{"leafA", "agentA", "agentB"} {
		_ = ping.Emit(ctxs[from], from)
	}
	_ = ping.Emit(root, "root")
	want := map[string]string{"agentA": "leafA,agentA", "leafA": "leafA", "agentB": "agentB"}
	for k, v := range want {
		if g := strings.Join(got[k], ","); g != v {
			t.Errorf("%s received %q, want %q", k, g, v)
		}
	}
}

func TestTargetAndGlobal(t *testing.T) {
	root := ctxtest.New(t)
	even := root.With("parity", 0)
	odd := root.With("parity", 1)
	var evenN, oddN, globalN atomic.Int32
	_, _ = ping.On(even, func(string) error { evenN.Add(1); return nil })
	_, _ = ping.On(odd, func(string) error { oddN.Add(1); return nil })
	_, _ = ping.On(odd, func(string) error { globalN.Add(1); return nil }, ctx.Global)
	onlyEven := ctx.Target(func(l *ctx.Context) bool { return l.Value("parity") == 0 })
	_ = ping.Emit(root, "x", onlyEven)
	_ = ping.Parallel(root, "x", onlyEven)
	if evenN.Load() != 2 || oddN.Load() != 0 || globalN.Load() != 2 {
		t.Fatalf("even %d odd %d global %d", evenN.Load(), oddN.Load(), globalN.Load())
	}
}

// A listener is an effect of the scope that registered it.
func TestListenerLifetime(t *testing.T) {
	root := ctxtest.New(t)
	var n atomic.Int32
	def := ctx.Define(ctx.Meta{Name: "l"}, func(c *ctx.Context, _ struct{}) error {
		_, err := ping.On(c, func(string) error { n.Add(1); return nil })
		return err
	})
	s := ctxtest.MountActive(t, root, def, nil)
	_ = ping.Emit(root, "x")
	if err := s.Restart(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	_ = ping.Emit(root, "x")
	if err := s.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	_ = ping.Emit(root, "x")
	if n.Load() != 2 {
		t.Fatalf("called %d times, want 2 (one listener per activation)", n.Load())
	}
}
