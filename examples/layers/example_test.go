package layers_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/examples/layers"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A snippet registered in an agent's layer shadows the global one inside that agent only;
// a second one of the same name in one layer is refused.
func Example() {
	root := ctx.New(ctx.Options{Logger: slog.New(slog.DiscardHandler)})
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	snippets := layers.New()
	_, _ = snippets.Register(root, "greeting", "hello")

	reviewer := ctx.Define(ctx.Meta{Name: "reviewer"}, func(c *ctx.Context, _ struct{}) error {
		_, err := snippets.Register(c.Layered(), "greeting", "review carefully")
		return err
	})
	agent, _ := root.Plugin(reviewer, nil)
	_ = agent.Wait(context.Background())

	fmt.Println(snippets.Lookup(root, "greeting"))
	fmt.Println(snippets.Lookup(agent.Context(), "greeting"))
	_, err := snippets.Register(root, "greeting", "hi")
	fmt.Println(err)
	// Output:
	// hello true
	// review carefully true
	// snippet "greeting" is already registered in layer "root"
}
