package ctx_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cordisgo/harness/ctx"
)

// RenameParams are the parameters of files/rename: the method's contract, exported next to
// the service; clients send the same type.
type RenameParams struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Validate runs after decoding; its problems are invalid parameters too.
func (p RenameParams) Validate() error {
	if p.To == "" {
		return &ctx.ConfigError{Key: "to", Msg: "required"}
	}
	return nil
}

func ExampleExposeRemote() {
	root := ctx.New(ctx.Options{})
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	_, _ = ctx.ExposeRemote(root, "files/rename", func(_ context.Context, p RenameParams) (string, error) {
		return p.From + " → " + p.To, nil
	})

	// A transport (plugins/remote) finds the method and hands it the JSON it received.
	m, _ := root.RemoteMethod("files/rename")
	res, err := m.Call(context.Background(), json.RawMessage(`{"from": "a.txt", "to": "b.txt"}`))
	fmt.Println(res, err)
	_, err = m.Call(context.Background(), json.RawMessage(`{"from": "a.txt", "To": "b.txt"}`))
	fmt.Println(err)
	// Output:
	// a.txt → b.txt <nil>
	// remote method "files/rename": invalid params: key "To": unknown key (did you mean "to"?)
}
