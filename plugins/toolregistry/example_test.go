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
	func(c *ctx.Context, _ struct{}) error {
		_, err := toolregistry.Key.Use(c).Register(c, toolregistry.Tool{
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
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
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
	res, err := tools.Execute(root, root, "greet", json.RawMessage(`{"name":"Ada"}`), toolregistry.ExecOptions{})
	fmt.Println(res.Text(), err)
	res, err = tools.Execute(root, root, "greet", json.RawMessage(`{"name":42}`), toolregistry.ExecOptions{})
	fmt.Println(errors.Is(err, toolregistry.ErrInvalidArgs), res.IsError)

	// Unloading the plugin unregisters its tool.
	_ = greeterScope.Dispose(context.Background())
	_, err = tools.Execute(root, root, "greet", json.RawMessage(`{"name":"Ada"}`), toolregistry.ExecOptions{})
	fmt.Println(err)
	// Output:
	// greet (by greeter): Greets someone by name.
	// Hello, Ada! <nil>
	// true true
	// tool "greet": unknown tool "greet"
}

// A tool whose work depends on something with a lifetime of its own (here a connection that
// closes while the call waits) ends its call with Call.Cancel; the registry reports the
// tool's error as for any other failure.
func ExampleCall_Cancel() {
	root := ctx.New(ctx.Options{Logger: slog.New(slog.DiscardHandler)})
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	if _, err := root.Plugin(toolregistry.Plugin, nil); err != nil {
		panic(err)
	}
	if err := root.Settle(context.Background()); err != nil {
		panic(err)
	}
	tools, _ := toolregistry.Key.Get(root)

	errClosed := errors.New("the connection closed")
	connectionClosed := make(chan struct{})
	_, err := tools.Register(root, toolregistry.Tool{
		Name: "wait",
		Execute: func(cx context.Context, call *toolregistry.Call) (*toolregistry.Result, error) {
			go func() { <-connectionClosed; call.Cancel(errClosed) }()
			<-cx.Done()
			return nil, context.Cause(cx)
		},
	})
	if err != nil {
		panic(err)
	}
	close(connectionClosed)
	_, err = tools.Execute(root, root, "wait", nil, toolregistry.ExecOptions{})
	fmt.Println(err, errors.Is(err, errClosed))
	// Output:
	// tool "wait": the connection closed true
}
