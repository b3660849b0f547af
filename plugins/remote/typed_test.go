package remote_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/remote"
)

// AddParams are the parameters of the typed test methods.
type AddParams struct {
	A int `json:"a"`
	B int `json:"b"`
}

// Validate refuses negative numbers.
func (p AddParams) Validate() error {
	if p.A < 0 || p.B < 0 {
		return &ctx.ConfigError{Key: "a", Msg: "expected a number ≥ 0"}
	}
	return nil
}

// AddResult is the answer of typed/add.
type AddResult struct {
	Sum int `json:"sum"`
}

// The typed test methods, declared once for the plugin that serves them and the callers.
var (
	methodAdd  = remote.NewMethod[AddParams, AddResult]("typed/add")
	methodUpto = remote.NewStreamMethod[AddParams, AddResult]("typed/upto")
)

var typedPlugin = ctx.Define(ctx.Meta{Name: "typed"}, func(c *ctx.Context, _ struct{}) error {
	if _, err := methodAdd.Expose(c, func(_ context.Context, p AddParams) (AddResult, error) {
		if p.A == 13 {
			return AddResult{}, remote.Errorf(remote.CodeConflict, "unlucky")
		}
		return AddResult{Sum: p.A + p.B}, nil
	}); err != nil {
		return err
	}
	_, err := methodUpto.Expose(c, func(_ context.Context, p AddParams, send func(AddResult) error) error {
		for i := p.A; i <= p.B; i++ {
			if err := send(AddResult{Sum: i}); err != nil {
				return err
			}
		}
		return nil
	})
	return err
})

// TestTypedMethods calls typed methods over HTTP and in process: the same answers, and
// the same refusals, an unknown key named with the method.
func TestTypedMethods(t *testing.T) {
	h := newHost(t, nil)
	ctxtest.MountActive(t, h.root, typedPlugin, nil)
	cx := ctxtest.Wait(t)
	callers := map[string]remote.Caller{"http": h.client, "local": remote.NewLocal(h.root)}
	for name, cl := range callers {
		t.Run(name, func(t *testing.T) {
			r, err := methodAdd.Call(cx, cl, AddParams{A: 2, B: 3})
			if err != nil || r.Sum != 5 {
				t.Fatalf("add: %+v %v", r, err)
			}
			var sums []int
			err = methodUpto.Call(cx, cl, AddParams{A: 1, B: 3}, func(r AddResult) error {
				sums = append(sums, r.Sum)
				return nil
			})
			if err != nil || len(sums) != 3 || sums[2] != 3 {
				t.Fatalf("upto: %v %v", sums, err)
			}
			for _, tc := range []struct {
				params any
				status int
				code   remote.Code
				want   string
			}{
				{map[string]any{"a": 1, "bb": 2}, http.StatusBadRequest, remote.CodeBadRequest, `remote method "typed/add": invalid params: key "bb": unknown key (did you mean "b"?)`},
				{map[string]any{"a": "one"}, http.StatusBadRequest, remote.CodeBadRequest, `key "a": expected an integer`},
				{AddParams{A: -1}, http.StatusBadRequest, remote.CodeBadRequest, `key "a": expected a number ≥ 0`},
				{AddParams{A: 13}, http.StatusConflict, remote.CodeConflict, "unlucky"},
			} {
				err := cl.Call(cx, "typed/add", tc.params, nil)
				re := wantRemoteError(t, err, tc.status, tc.code)
				if !strings.Contains(re.Message, tc.want) || remote.CodeOf(err) != tc.code {
					t.Fatalf("%v: %q, want %q", tc.params, re.Message, tc.want)
				}
			}
			err = cl.Stream(cx, "typed/upto", map[string]any{"a": 1, "c": 2}, nil)
			if re, ok := errors.AsType[*remote.Error](err); !ok || re.Code != remote.CodeBadRequest || !strings.Contains(re.Message, `key "c"`) {
				t.Fatalf("stream with an unknown key: %v", err)
			}
			_ = wantRemoteError(t, cl.Call(cx, "typed/none", nil, nil), http.StatusNotFound, remote.CodeNotFound)
			_ = wantRemoteError(t, cl.Call(cx, "typed/upto", nil, nil), http.StatusNotFound, remote.CodeNotFound)
			stop := errors.New("enough")
			if err := methodUpto.Call(cx, cl, AddParams{A: 1, B: 9}, func(AddResult) error { return stop }); !errors.Is(err, stop) {
				t.Fatalf("stream ended by fn: %v", err)
			}
		})
	}
}
