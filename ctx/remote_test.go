package ctx_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
)

func TestExposeRemote(t *testing.T) {
	root := ctxtest.New(t)
	def := ctx.Define(ctx.Meta{Name: "svc"}, func(c *ctx.Context, _ struct{}) error {
		_, err := c.ExposeRemote(ctx.RemoteMethod{Name: "svc/echo", Call: func(_ context.Context, p json.RawMessage) (any, error) { return p, nil }})
		return err
	})
	s := ctxtest.MountActive(t, root, def, nil)
	m, ok := root.RemoteMethod("svc/echo")
	if !ok {
		t.Fatal("method not exposed")
	}
	if v, err := m.Call(context.Background(), json.RawMessage(`1`)); err != nil || string(v.(json.RawMessage)) != "1" {
		t.Fatalf("call %v %v", v, err)
	}
	bad := []ctx.RemoteMethod{
		{Name: "noslash", Call: m.Call},
		{Name: "svc/echo", Call: m.Call},
		{Name: "svc/none"},
	}
	for _, b := range bad {
		if _, err := root.ExposeRemote(b); err == nil {
			t.Fatalf("%q accepted", b.Name)
		}
	}
	if err := s.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	if len(root.RemoteMethods()) != 0 {
		t.Fatal("method outlived its scope")
	}
}
