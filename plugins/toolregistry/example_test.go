package toolregistry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// greeter is a plugin that registers one tool. The registration is an effect of the
// plugin's scope: it disappears when the plugin unloads.
var greeter = ctx.Define(ctx.Meta{Name: "greeter", Inject: []ctx.Dependency{toolregistry.Key}},
	func(ctx *ctx.Context, _ struct{}) error {
		_, err := toolregistry.Key.Use(ctx).Register(ctx, toolregistry.Tool{
			Name:        "greet",
			Description: "Greets someone by name.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
			Execute: func(_ context.Context, call *toolregistry.Call) (*toolregistry.Result, error) {
				var in struct{ Name string }
				if err := json.Unmarshal(call.Args, &in); err != nil {
					return nil, err
				}
				return toolregistry.TextResult("Hello, " + in.Name + "!"), nil
			},
		})
		return err
	})

func Example() {
	root := ctx.New(ctx.Options{Logger: slog.New(slog.DiscardHandler)})
	defer root.Scope().Dispose(context.Background())
	if _, err := root.Plugin(toolregistry.Plugin, nil); err != nil {
		panic(err)
	}
	greeterScope, err := root.Plugin(greeter, nil)
	if err != nil {
		panic(err)
	}
	if err := root.Settle(context.Background()); err != nil {
		panic(err)
	}

	tools, _ := toolregistry.Key.Get(root)
	for _, in := range tools.List(root) {
		fmt.Printf("%s (by %s): %s\n", in.Name, in.Owner, in.Description)
	}
	res, err := tools.Execute(root, "greet", json.RawMessage(`{"name":"Ada"}`), toolregistry.ExecOptions{})
	fmt.Println(res.Text(), err)
	res, err = tools.Execute(root, "greet", json.RawMessage(`{"name":42}`), toolregistry.ExecOptions{})
	fmt.Println(errors.Is(err, toolregistry.ErrInvalidArgs), res.IsError)

	// Unloading the plugin unregisters its tool.
	_ = greeterScope.Dispose(context.Background())
	_, err = tools.Execute(root, "greet", json.RawMessage(`{"name":"Ada"}`), toolregistry.ExecOptions{})
	fmt.Println(err)
	// Output:
	// greet (by greeter): Greets someone by name.
	// Hello, Ada! <nil>
	// true true
	// tool "greet": unknown tool "greet"
}
