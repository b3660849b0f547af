package remote_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/remote"
)

// GreetParams and GreetResult are the wire contract of greeter/greet: the service exposes
// the method with them and clients call it with them.
type GreetParams struct {
	Name string `json:"name"`
}

// GreetResult is greeter/greet's answer.
type GreetResult struct {
	Greeting string `json:"greeting"`
}

// MethodGreet declares greeter/greet once: its name and both types. The service serves
// it with Expose and clients call it with Call, so a wrong pair does not compile.
var MethodGreet = remote.NewMethod[GreetParams, GreetResult]("greeter/greet")

func ExampleMethod() {
	root := ctx.New(ctx.Options{Logger: slog.New(slog.DiscardHandler)})
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	_, _ = MethodGreet.Expose(root, func(_ context.Context, p GreetParams) (GreetResult, error) {
		return GreetResult{Greeting: "hello, " + p.Name}, nil
	})

	// The same call goes to a running host with a *remote.Client (remote.Discover).
	var cl remote.Caller = remote.NewLocal(root)
	r, err := MethodGreet.Call(context.Background(), cl, GreetParams{Name: "ada"})
	fmt.Println(r.Greeting, err)

	// Parameters are decoded strictly: an unknown key is refused, named.
	err = cl.Call(context.Background(), "greeter/greet", map[string]string{"nmae": "ada"}, nil)
	fmt.Println(remote.CodeOf(err))
	fmt.Println(err)
	// Output:
	// hello, ada <nil>
	// bad_request
	// remote: bad_request: remote method "greeter/greet": invalid params: key "nmae": unknown key (did you mean "name"?)
}
