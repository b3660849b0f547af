package ctx_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/cordisgo/harness/ctx"
)

// GreeterConfig is the configuration of the greeter plugin.
type GreeterConfig struct {
	Name string `json:"name"`
}

// Greeter is a plugin: a definition value with a name and an apply function.
var Greeter = ctx.Define(ctx.Meta{Name: "greeter"}, func(c *ctx.Context, cfg GreeterConfig) error {
	fmt.Println("hello,", cfg.Name)
	_, err := c.Defer("goodbye", func(context.Context) error {
		fmt.Println("goodbye,", cfg.Name)
		return nil
	})
	return err
})

func Example_plugin() {
	root := ctx.New(ctx.Options{})
	scope, _ := root.Plugin(Greeter, map[string]any{"name": "world"})
	_ = scope.Wait(context.Background())
	fmt.Println(scope.State())
	_ = root.Scope().Dispose(context.Background())
	fmt.Println(scope.State())
	// Output:
	// hello, world
	// active
	// goodbye, world
	// disposed
}

// Clock is a service interface.
type Clock interface{ Now() string }

type fixedClock string

func (f fixedClock) Now() string { return string(f) }

// ClockKey names the clock service.
var ClockKey = ctx.NewKey[Clock]("clock")

// ClockProvider provides the clock; Reporter needs it and waits for it.
var (
	ClockProvider = ctx.Define(ctx.Meta{Name: "clock"}, func(c *ctx.Context, _ struct{}) error {
		_, err := ClockKey.Provide(c, fixedClock("noon"))
		return err
	})
	Reporter = ctx.Define(ctx.Meta{Name: "reporter", Inject: []ctx.Dependency{ClockKey}}, func(c *ctx.Context, _ struct{}) error {
		fmt.Println("it is", ClockKey.Use(c).Now())
		return nil
	})
)

func Example_service() {
	root := ctx.New(ctx.Options{})
	defer func() { _ = root.Scope().Dispose(context.Background()) }()

	reporter, _ := root.Plugin(Reporter, nil)
	_ = root.Settle(context.Background())
	fmt.Println("reporter is", reporter.State())

	clock, _ := root.Plugin(ClockProvider, nil)
	_ = root.Settle(context.Background())
	fmt.Println("reporter is", reporter.State())

	_ = clock.Dispose(context.Background())
	fmt.Println("reporter is", reporter.State())
	// Output:
	// reporter is pending
	// it is noon
	// reporter is active
	// reporter is pending
}

// Joined is an event whose listeners receive a user name.
var Joined = ctx.NewEvent[string]("chat/joined")

// Moderate is a waterfall: listeners may rewrite a message.
var Moderate = ctx.NewChain[string, string]("chat/moderate")

func Example_event() {
	root := ctx.New(ctx.Options{})
	defer func() { _ = root.Scope().Dispose(context.Background()) }()

	_, _ = Joined.On(root, func(name string) error {
		fmt.Println("welcome,", name)
		return nil
	})
	_ = Joined.Emit(root, "ada")

	_, _ = Moderate.On(root, func(msg string, next func() (string, error)) (string, error) {
		if msg == "spam" {
			return "[removed]", nil // do not call next: veto
		}
		return next()
	})
	for _, msg := range []string{"hi", "spam"} {
		out, _ := Moderate.Waterfall(root, msg, func() (string, error) { return msg, nil })
		fmt.Println(out)
	}
	// Output:
	// welcome, ada
	// hi
	// [removed]
}

// Listened lets a dispatcher skip building what only listeners would use.
func ExampleChain_Listened() {
	root := ctx.New(ctx.Options{})
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	moderate := ctx.NewChain[string, string]("example/moderate")

	fmt.Println(moderate.Listened(root))
	_, _ = moderate.On(root, func(msg string, next func() (string, error)) (string, error) {
		out, err := next()
		return strings.ToUpper(out), err
	})
	if moderate.Listened(root) {
		out, _ := moderate.Waterfall(root, "hello", func() (string, error) { return "hello", nil })
		fmt.Println(out)
	}
	// Output:
	// false
	// HELLO
}
