package service_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/examples/service"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A plugin that injects the clock loads once the clock is provided.
func Example() {
	root := ctx.New(ctx.Options{Logger: slog.New(slog.DiscardHandler)})
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	reporter := ctx.Define(ctx.Meta{Name: "reporter", Inject: []ctx.Dependency{service.Key}}, func(c *ctx.Context, _ struct{}) error {
		fmt.Println("it is", service.Key.Use(c).Format(time.Date(2026, 12, 3, 15, 4, 0, 0, time.UTC)))
		return nil
	})
	_, _ = root.Plugin(reporter, nil)
	_, _ = root.Plugin(service.Plugin, map[string]any{"layout": time.Kitchen})
	_ = root.Settle(context.Background())
	// Output:
	// it is 3:04PM
}
