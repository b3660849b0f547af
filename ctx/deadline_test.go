package ctx_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
)

// deadlineProbe is a plugin whose disposer reports the deadline of the context it receives
// (the zero time for none), and which mounts a child doing the same when nested is set.
func deadlineProbe(name string, seen chan<- time.Time, nested bool, inject ...ctx.Dependency) ctx.PluginDef {
	return ctx.Define(ctx.Meta{Name: name, Inject: inject}, func(c *ctx.Context, _ struct{}) error {
		if _, err := c.Defer("probe", func(dcx context.Context) error {
			d, _ := dcx.Deadline()
			seen <- d
			return nil
		}); err != nil {
			return err
		}
		if nested {
			_, err := c.Plugin(deadlineProbe(name+"-child", seen, false), nil)
			return err
		}
		return nil
	})
}

// The caller's deadline reaches the disposers on every unload path: Dispose (a child's
// disposers included), Restart, and the unload of a dependent whose provider's scope is
// disposed. An unload nobody gave a deadline has none.
func TestDisposersGetTheCallersDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := ctxtest.New(t)
		seen := make(chan time.Time, 8)
		deadline := time.Now().Add(3 * time.Second)
		dcx, cancel := context.WithDeadline(context.Background(), deadline)
		defer cancel()
		want := func(path string, n int, d time.Time) {
			t.Helper()
			for i := range n {
				if got := <-seen; !got.Equal(d) {
					t.Fatalf("%s: disposer %d saw deadline %v, want %v", path, i, got, d)
				}
			}
		}

		s := ctxtest.MountActive(t, root, deadlineProbe("dispose", seen, true), nil)
		ctxtest.Settle(t, root)
		if err := s.Dispose(dcx); err != nil {
			t.Fatal(err)
		}
		want("dispose", 2, deadline)

		s = ctxtest.MountActive(t, root, deadlineProbe("restart", seen, false), nil)
		if err := s.Restart(dcx); err != nil {
			t.Fatal(err)
		}
		want("restart", 1, deadline)

		p := ctxtest.MountActive(t, root, provider("provider", aKey, "v"), nil)
		dep := ctxtest.MountActive(t, root, deadlineProbe("dependent", seen, false, aKey), nil)
		if err := p.Dispose(dcx); err != nil {
			t.Fatal(err)
		}
		want("dependent of a disposed provider", 1, deadline)
		ctxtest.RequireState(t, dep, ctx.Pending)

		if err := s.Update(nil); err != nil { // a restart nobody bounded
			t.Fatal(err)
		}
		ctxtest.Settle(t, root)
		want("update", 1, time.Time{})
		if err := s.Dispose(context.Background()); err != nil {
			t.Fatal(err)
		}
		want("dispose without deadline", 1, time.Time{})
	})
}

// A disposal that runs out of time returns the context's error and the tree still ends
// consistent: the scope finishes its unload on its own.
func TestDisposeDeadlineLeavesTreeConsistent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := ctxtest.New(t)
		release := make(chan struct{})
		s := ctxtest.MountActive(t, root, ctx.Define(ctx.Meta{Name: "slow"}, func(c *ctx.Context, _ struct{}) error {
			_, err := c.Defer("slow", func(context.Context) error { <-release; return nil })
			return err
		}), nil)
		dcx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := s.Dispose(dcx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Dispose = %v, want DeadlineExceeded", err)
		}
		close(release)
		ctxtest.Settle(t, root)
		ctxtest.RequireState(t, s, ctx.Disposed)
	})
}
