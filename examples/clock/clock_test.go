package clock_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/examples/clock"
	"github.com/cordisgo/harness/plugins/sysprompt"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestClock(t *testing.T) {
	root := ctxtest.New(t)
	ctxtest.MountActive(t, root, toolregistry.Plugin, nil)
	ctxtest.MountActive(t, root, clock.Plugin, map[string]any{"layout": "15:04"})
	tools, _ := toolregistry.Key.Get(root)
	// The first argument bounds the call (here: the test root's lifetime); the second is
	// the caller, whose scope decides which tools are visible.
	res, err := tools.Execute(root, root, "now", nil, toolregistry.ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := time.Parse("15:04", res.Text()); err != nil {
		t.Errorf("now = %q, not in the configured layout: %v", res.Text(), err)
	}
}

// The clock plugin registers the now tool, and its prompt section while a prompt service
// exists.
func Example() {
	root := ctx.New(ctx.Options{Logger: slog.New(slog.DiscardHandler)})
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	_, _ = root.Plugin(toolregistry.Plugin, nil)
	_, _ = root.Plugin(sysprompt.Plugin, nil)
	_, _ = root.Plugin(clock.Plugin, map[string]any{"layout": time.DateOnly})
	_ = root.Settle(context.Background())

	tools, _ := toolregistry.Key.Get(root)
	res, _ := tools.Execute(root, root, "now", nil, toolregistry.ExecOptions{})
	_, err := time.Parse(time.DateOnly, res.Text())
	fmt.Println(len(res.Text()), err)
	prompt, _ := sysprompt.Key.Get(root)
	p, _ := prompt.Assemble(root, nil)
	fmt.Println(p.Text)
	// Output:
	// 10 <nil>
	// Use the now tool when the user asks for the time.
}
