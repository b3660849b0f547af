package ctx_test

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
)

var (
	aKey = ctx.NewKey[string]("a")
	bKey = ctx.NewKey[string]("b")
)

// waitWithdrawn waits until rec has seen every named service withdrawn.
func waitWithdrawn(t *testing.T, rec *ctxtest.Recorder[ctx.ServiceChange], names ...string) {
	t.Helper()
	rec.WaitFor(t, func(ev []ctx.ServiceChange) bool {
		for _, n := range names {
			if !slices.ContainsFunc(ev, func(c ctx.ServiceChange) bool { return c.Name == n && !c.Provided }) {
				return false
			}
		}
		return true
	})
}

// Scope X provides b and injects a; scope Y provides a and injects b. The interleaving is
// forced: Y is active on b provided by the root, X is loading on Y's a when the root
// withdraws b; Y's unload withdraws a and waits for X, and X, whose apply then provides b
// in the free slot, unloads because a went away and withdraws b, which Y injects. Each
// withdrawal waits for the other scope. Before the wait-for rule, this stalled for good
// (under synctest: every goroutine of the bubble blocked, and the root's withdrawal never
// returned); now X's withdrawal sees that Y waits for X and does not wait for Y.
func TestMutualDependenciesDoNotStall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := ctxtest.New(t)
		rec := ctxtest.Record(t, root, ctx.ServiceChanged)
		withdrawB, err := bKey.Provide(root, "root-b")
		if err != nil {
			t.Fatal(err)
		}
		y := ctxtest.MountActive(t, root, ctx.Define(ctx.Meta{Name: "y", Inject: []ctx.Dependency{bKey}}, func(c *ctx.Context, _ struct{}) error {
			_, err := aKey.Provide(c, "y-a")
			return err
		}), nil)
		inApply := make(chan struct{})
		gate := make(chan struct{})
		var once sync.Once
		x := ctxtest.Mount(t, root, ctx.Define(ctx.Meta{Name: "x", Inject: []ctx.Dependency{aKey}}, func(c *ctx.Context, _ struct{}) error {
			first := false
			once.Do(func() { first = true })
			if !first {
				return nil
			}
			close(inApply)
			<-gate // a withdrawal of a does not cancel the load: it waits for it
			_, err := bKey.Provide(c, "x-b")
			return err
		}), nil)
		<-inApply

		wcx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		withdrawn := make(chan error, 1)
		go func() { withdrawn <- withdrawB(wcx) }()
		waitWithdrawn(t, rec, "b", "a") // the root's b and Y's a are gone; Y waits for X
		close(gate)
		if err := <-withdrawn; err != nil {
			t.Fatalf("root's withdrawal of b: %v (the tree stalled)", err)
		}
		ctxtest.Settle(t, root)
		ctxtest.RequireState(t, x, ctx.Pending)
		ctxtest.RequireState(t, y, ctx.Pending)
		if _, ok := aKey.Get(root); ok {
			t.Fatal("a still provided")
		}
		if _, ok := bKey.Get(root); ok {
			t.Fatal("b still provided")
		}
	})
}

// A withdrawal whose caller gave a deadline returns the context's error when a dependent
// does not finish unloading in time; the service is gone, the dependent finishes its unload
// on its own, and its disposers saw the caller's deadline.
func TestWithdrawalHonoursDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := ctxtest.New(t)
		release := make(chan struct{})
		seen := make(chan time.Time, 1)
		dep := ctxtest.Mount(t, root, ctx.Define(ctx.Meta{Name: "dep", Inject: []ctx.Dependency{aKey}}, func(c *ctx.Context, _ struct{}) error {
			_, err := c.Defer("slow", func(dcx context.Context) error {
				d, _ := dcx.Deadline()
				seen <- d
				<-release
				return nil
			})
			return err
		}), nil)
		withdraw, err := aKey.Provide(root, "v")
		if err != nil {
			t.Fatal(err)
		}
		ctxtest.Settle(t, root)
		ctxtest.RequireState(t, dep, ctx.Active)

		deadline := time.Now().Add(5 * time.Second)
		wcx, cancel := context.WithDeadline(context.Background(), deadline)
		defer cancel()
		err = withdraw(wcx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("withdraw = %v, want DeadlineExceeded", err)
		}
		if got := <-seen; !got.Equal(deadline) {
			t.Fatalf("the dependent's disposer saw deadline %v, want %v", got, deadline)
		}
		if _, ok := aKey.Get(root); ok {
			t.Fatal("a still provided after the withdrawal gave up")
		}
		close(release)
		ctxtest.Settle(t, root)
		ctxtest.RequireState(t, dep, ctx.Pending)
	})
}

// Random mount, dispose, restart and provide churn on 8 goroutines over plugins that depend
// on each other in both directions, nested and not: the tree must always settle. Every
// round is bounded by a deadline and fails with the round number rather than hanging.
func TestChurnAlwaysSettles(t *testing.T) {
	rounds := 150
	if testing.Short() {
		rounds = 30
	}
	for round := range rounds {
		if !churnRound(t, round) {
			return
		}
	}
}

func churnRound(t *testing.T, round int) bool {
	t.Helper()
	root := ctx.New(ctx.Options{Logger: discardLogger()})
	provideIgnoringDup := func(c *ctx.Context, k ctx.Key[string], v string) error {
		if _, err := k.Provide(c, v); err != nil && !errors.Is(err, ctx.ErrDuplicateService) {
			return err
		}
		return nil
	}
	var defs []ctx.PluginDef
	defs = append(defs,
		ctx.Define(ctx.Meta{Name: "x", Inject: []ctx.Dependency{aKey}}, func(c *ctx.Context, _ struct{}) error {
			return provideIgnoringDup(c, bKey, "x")
		}),
		ctx.Define(ctx.Meta{Name: "y", Inject: []ctx.Dependency{bKey}}, func(c *ctx.Context, _ struct{}) error {
			return provideIgnoringDup(c, aKey, "y")
		}),
		ctx.Define(ctx.Meta{Name: "pa"}, func(c *ctx.Context, _ struct{}) error {
			return provideIgnoringDup(c, aKey, "pa")
		}),
		ctx.Define(ctx.Meta{Name: "pb"}, func(c *ctx.Context, _ struct{}) error {
			return provideIgnoringDup(c, bKey, "pb")
		}),
		ctx.Define(ctx.Meta{Name: "nested"}, func(c *ctx.Context, _ struct{}) error {
			if err := provideIgnoringDup(c, bKey, "nested"); err != nil {
				return err
			}
			_, err := c.Inject("nested-a", []ctx.Dependency{aKey}, func(c *ctx.Context) error {
				_, err := c.Go("worker", func(runcx context.Context) error { <-runcx.Done(); return nil })
				return err
			})
			return err
		}),
	)
	var (
		mu     sync.Mutex
		scopes []*ctx.Scope
	)
	pick := func(rng *rand.Rand) *ctx.Scope {
		mu.Lock()
		defer mu.Unlock()
		if len(scopes) == 0 {
			return nil
		}
		return scopes[rng.IntN(len(scopes))]
	}
	deadlinecx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for g := range 8 {
		rng := rand.New(rand.NewPCG(uint64(round), uint64(g)))
		wg.Go(func() {
			for range 40 {
				switch rng.IntN(5) {
				case 0, 1:
					on := root
					if s := pick(rng); s != nil && rng.IntN(2) == 0 {
						if sc := s.Context(); sc != nil {
							on = sc
						}
					}
					if s, err := on.Plugin(defs[rng.IntN(len(defs))], nil); err == nil {
						mu.Lock()
						scopes = append(scopes, s)
						mu.Unlock()
					}
				case 2:
					if s := pick(rng); s != nil {
						_ = s.Dispose(deadlinecx)
					}
				case 3:
					if s := pick(rng); s != nil {
						_ = s.Restart(deadlinecx)
					}
				default:
					k := aKey
					if rng.IntN(2) == 0 {
						k = bKey
					}
					if withdraw, err := k.Provide(root, "root"); err == nil {
						_ = withdraw(deadlinecx)
					}
				}
			}
		})
	}
	wg.Wait()
	if err := root.Settle(deadlinecx); err != nil {
		t.Errorf("round %d: the tree did not settle: %v", round, err)
		return false
	}
	if err := root.Scope().Dispose(deadlinecx); err != nil && deadlinecx.Err() != nil {
		t.Errorf("round %d: root dispose: %v", round, err)
		return false
	}
	if err := root.Settle(deadlinecx); err != nil {
		t.Errorf("round %d: the tree did not settle after dispose: %v", round, err)
		return false
	}
	mu.Lock()
	defer mu.Unlock()
	for _, s := range scopes {
		if s.State() != ctx.Disposed {
			t.Errorf("round %d: %s is %v after the root's disposal", round, s, s.State())
			return false
		}
	}
	return true
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// Context.Defer on an activation that has ended runs the cleanup at once and still reports
// ErrInactive, as Effect.Defer does, so a late release does not leak.
func TestLateDeferRunsAtOnce(t *testing.T) {
	root := ctxtest.New(t)
	var late *ctx.Context
	s := ctxtest.MountActive(t, root, ctx.Define(ctx.Meta{Name: "late"}, func(c *ctx.Context, _ struct{}) error {
		late = c
		return nil
	}), nil)
	if err := s.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	ran := 0
	d, err := late.Defer("release", func(context.Context) error { ran++; return nil })
	if !errors.Is(err, ctx.ErrInactive) || d != nil {
		t.Fatalf("Defer on an ended activation = %v, %v; want nil, ErrInactive", d, err)
	}
	if ran != 1 {
		t.Fatalf("cleanup ran %d times, want once at once", ran)
	}
}

// Listeners of built-in events are isolated: one that fails and one that panics, mounted
// first, are logged, and a later listener still sees every event.
func TestBuiltinEventListenersIsolated(t *testing.T) {
	root, log := ctxtest.NewLogged(t)
	bad := ctxtest.MountActive(t, root, ctx.Define(ctx.Meta{Name: "bad"}, func(c *ctx.Context, _ struct{}) error {
		if _, err := ctx.StatusChanged.On(c, func(ctx.StatusChange) error { return errors.New("listener broke") }); err != nil {
			return err
		}
		if _, err := ctx.ServiceChanged.On(c, func(ctx.ServiceChange) error { panic("listener panicked") }); err != nil {
			return err
		}
		if _, err := ctx.ScopeCreated.On(c, func(*ctx.Scope) error { return errors.New("created broke") }); err != nil {
			return err
		}
		_, err := ctx.ScopeDisposed.On(c, func(*ctx.Scope) error { panic("disposed panicked") })
		return err
	}), nil)
	status := ctxtest.Record(t, root, ctx.StatusChanged)
	services := ctxtest.Record(t, root, ctx.ServiceChanged)
	created := ctxtest.Record(t, root, ctx.ScopeCreated)
	disposed := ctxtest.Record(t, root, ctx.ScopeDisposed)

	s := ctxtest.MountActive(t, root, provider("good", aKey, "v"), nil)
	if err := s.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	var states []ctx.State
	for _, ch := range status.Events() {
		if ch.Scope == s {
			states = append(states, ch.New)
		}
	}
	if want := []ctx.State{ctx.Loading, ctx.Active, ctx.Unloading, ctx.Disposed}; !slices.Equal(states, want) {
		t.Fatalf("later listener saw %v, want %v", states, want)
	}
	if n := len(services.Events()); n != 2 {
		t.Fatalf("later listener saw %d service changes, want 2", n)
	}
	if len(created.Events()) != 1 || len(disposed.Events()) != 1 {
		t.Fatalf("later listeners saw %d created, %d disposed; want 1 and 1", len(created.Events()), len(disposed.Events()))
	}
	var fromBad int
	for _, r := range log.Records(slog.LevelError) {
		if r.Message != "listener failed" {
			continue
		}
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "scope_id" && a.Value.Uint64() == bad.ID() {
				fromBad++
			}
			return true
		})
	}
	if fromBad < 6 { // 4 status changes, 2 service changes, created, disposed
		t.Fatalf("%d listener failures logged with the bad scope's logger, want at least 6:\n%s", fromBad, log.String())
	}
}
