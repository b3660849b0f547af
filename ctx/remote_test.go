package ctx_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
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

// greetParams are the parameters of the typed test method.
type greetParams struct {
	Name  string `json:"name"`
	Times int    `json:"times,omitempty"`
}

func (p greetParams) Validate() error {
	if p.Name == "" {
		return &ctx.ConfigError{Key: "name", Msg: "required"}
	}
	return nil
}

func TestExposeRemoteTyped(t *testing.T) {
	root := ctxtest.New(t)
	if _, err := ctx.ExposeRemote(root, "svc/greet", func(_ context.Context, p greetParams) (string, error) {
		return "hello, " + p.Name, nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := ctx.ExposeRemoteStream(root, "svc/count", func(_ context.Context, p greetParams, send func(int) error) error {
		for i := range p.Times {
			if err := send(i); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	m, _ := root.RemoteMethod("svc/greet")
	if v, err := m.Call(context.Background(), json.RawMessage(`{"name":"ada"}`)); err != nil || v != "hello, ada" {
		t.Fatalf("call: %v %v", v, err)
	}
	for _, tc := range []struct{ params, key, want string }{
		{`{"name":"ada","nmae":"x"}`, "nmae", `unknown key (did you mean "name"?)`},
		{`{"Name":"ada"}`, "Name", `did you mean "name"?`},
		{`{"name":7}`, "name", "expected a string"},
		{`{}`, "name", "required"},
		{`null`, "name", "required"},
	} {
		_, err := m.Call(context.Background(), json.RawMessage(tc.params))
		pe, ok := errors.AsType[*ctx.ParamsError](err)
		if !ok || pe.Method != "svc/greet" {
			t.Fatalf("%s: %v, want a *ctx.ParamsError of svc/greet", tc.params, err)
		}
		ce := ctx.ConfigErrors(err)
		if len(ce) != 1 || ce[0].Key != tc.key || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `"svc/greet"`) {
			t.Fatalf("%s: %v, want key %q and %q", tc.params, err, tc.key, tc.want)
		}
	}
	s, _ := root.RemoteMethod("svc/count")
	var got []any
	if err := s.Stream(context.Background(), json.RawMessage(`{"name":"x","times":2}`), func(v any) error { got = append(got, v); return nil }); err != nil || len(got) != 2 || got[1] != 1 {
		t.Fatalf("stream: %v %v", got, err)
	}
	if err := s.Stream(context.Background(), json.RawMessage(`{"name":"x","extra":1}`), func(any) error { return nil }); !errors.Is(err, ctx.ErrInvalidConfig) {
		t.Fatalf("stream with an unknown key: %v", err)
	}
}
