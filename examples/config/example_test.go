package config

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/ctx"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Decoding runs Validate after the keys are decoded; each problem names its key.
func ExampleConfig_Validate() {
	_, err := ctx.Decode[Config](map[string]any{"layout": ""})
	fmt.Println(err)
	// Output:
	// key "layout": must not be empty
}

// An update the hook accepts is taken in place: the scope stays active.
func ExamplePlugin() {
	root := ctx.New(ctx.Options{})
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	scope, _ := root.Plugin(Plugin, map[string]any{"layout": time.DateOnly})
	_ = scope.Wait(context.Background())

	_ = scope.Update(map[string]any{"layout": time.Kitchen})
	cfg, _ := Plugin.Config(scope) // the Config of scope's current load
	fmt.Println(layout.Load(), cfg.Layout, scope.State())
	// Output:
	// 3:04PM 3:04PM active
}
