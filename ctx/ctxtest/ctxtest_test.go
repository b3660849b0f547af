package ctxtest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeTB records what ctxtest reports and runs the cleanups on demand.
type fakeTB struct {
	testing.TB
	cleanups []func()
	errors   []string
	logs     []string
}

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Logf(format string, args ...any) {
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Failed() bool { return len(f.errors) > 0 }
func (f *fakeTB) end() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

var failing = ctx.Define(ctx.Meta{Name: "failing"}, func(c *ctx.Context, _ struct{}) error {
	_, err := c.Defer("broken", func(context.Context) error { return errors.New("cleanup broke") })
	return err
})

// A tree whose disposal fails fails the test, naming the error.
func TestDirtyDisposeFailsTheTest(t *testing.T) {
	f := &fakeTB{TB: t}
	root := ctxtest.New(f)
	if _, err := root.Plugin(failing, nil); err != nil {
		t.Fatal(err)
	}
	ctxtest.Settle(t, root)
	f.end()
	if len(f.errors) != 1 || !strings.Contains(f.errors[0], "cleanup broke") || !strings.Contains(f.errors[0], "ExpectDirtyDispose") {
		t.Fatalf("errors reported: %q", f.errors)
	}
}

// A test that expects the dirty disposal logs it instead, with its reason.
func TestExpectDirtyDispose(t *testing.T) {
	f := &fakeTB{TB: t}
	root := ctxtest.New(f)
	ctxtest.ExpectDirtyDispose(f, "the cleanup fails on purpose")
	if _, err := root.Plugin(failing, nil); err != nil {
		t.Fatal(err)
	}
	ctxtest.Settle(t, root)
	f.end()
	if len(f.errors) != 0 {
		t.Fatalf("errors reported: %q", f.errors)
	}
	if len(f.logs) == 0 || !strings.Contains(f.logs[0], "the cleanup fails on purpose") || !strings.Contains(f.logs[0], "cleanup broke") {
		t.Fatalf("logs: %q", f.logs)
	}
}

// A clean tree reports nothing.
func TestCleanDispose(t *testing.T) {
	f := &fakeTB{TB: t}
	root := ctxtest.New(f)
	ctxtest.MountActive(t, root, ctx.Define(ctx.Meta{Name: "fine"}, func(c *ctx.Context, _ struct{}) error {
		_, err := c.Go("worker", func(runcx context.Context) error { <-runcx.Done(); return nil })
		return err
	}), nil)
	f.end()
	if len(f.errors)+len(f.logs) != 0 {
		t.Fatalf("reported %q %q", f.errors, f.logs)
	}
}

// MountService returns the service the mounted plugin provides, as the context sees it.
func TestMountService(t *testing.T) {
	key := ctx.NewKey[string]("greeting")
	def := ctx.Define(ctx.Meta{Name: "greeter"}, func(c *ctx.Context, _ struct{}) error {
		_, err := key.Provide(c, "hello")
		return err
	})
	root := ctxtest.New(t)
	if got := ctxtest.MountService(t, root, def, nil, key); got != "hello" {
		t.Fatalf("service %q", got)
	}
}

// Layer mounts its children in a layer of its own; Only finds the one scope of a definition.
func TestLayerAndOnly(t *testing.T) {
	root := ctxtest.New(t)
	leaf := ctx.Define(ctx.Meta{Name: "leaf"}, func(*ctx.Context, struct{}) error { return nil })
	agent := ctxtest.Layer("agent", leaf)
	ctxtest.MountActive(t, root, agent, nil)
	s := ctxtest.Only(t, root, leaf)
	if s.Parent() != ctxtest.Only(t, root, agent) || s.State() != ctx.Active {
		t.Fatalf("leaf %s under %s, %v", s, s.Parent(), s.State())
	}
	if s.Context().Layer() == root.Layer() {
		t.Fatal("the leaf is in the root's layer")
	}
}
