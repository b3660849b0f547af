package remote_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/remote"
)

// Greeter exposes one call method and one stream method.
var Greeter = ctx.Define(ctx.Meta{Name: "greeter"}, func(c *ctx.Context, _ struct{}) error {
	if _, err := c.ExposeRemote(ctx.RemoteMethod{
		Name: "greeter/hello",
		Call: func(_ context.Context, params json.RawMessage) (any, error) {
			var name string
			if err := json.Unmarshal(params, &name); err != nil {
				return nil, remote.Errorf(remote.CodeBadRequest, "params must be a name")
			}
			return "hello, " + name, nil
		},
	}); err != nil {
		return err
	}
	_, err := c.ExposeRemote(ctx.RemoteMethod{
		Name: "greeter/countdown",
		Stream: func(ccx context.Context, _ json.RawMessage, send func(any) error) error {
			for i := 3; i > 0; i-- {
				if err := send(i); err != nil {
					return err
				}
			}
			return nil
		},
	})
	return err
})

func Example() {
	dir, _ := os.MkdirTemp("", "remote-example")
	defer func() { _ = os.RemoveAll(dir) }()

	root := ctx.New(ctx.Options{Logger: slog.New(slog.DiscardHandler)})
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	_, _ = root.Plugin(remote.Plugin, map[string]any{"tokenFile": filepath.Join(dir, "remote.token")})
	_, _ = root.Plugin(Greeter, nil)
	_ = root.Settle(context.Background())

	// A CLI finds the running host through the endpoint file next to the token.
	client, err := remote.Discover(filepath.Join(dir, "remote.endpoint.json"))
	if err != nil {
		fmt.Println(err)
		return
	}
	var greeting string
	if err := client.Call(context.Background(), "greeter/hello", "world", &greeting); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(greeting)

	err = client.Stream(context.Background(), "greeter/countdown", nil, func(v json.RawMessage) error {
		fmt.Println(string(v))
		return nil
	})
	fmt.Println("stream ended:", err)

	err = client.Call(context.Background(), "greeter/hello", 42, nil)
	fmt.Println(err)
	// Output:
	// hello, world
	// 3
	// 2
	// 1
	// stream ended: <nil>
	// remote: bad_request: params must be a name
}
