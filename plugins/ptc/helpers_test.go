package ptc_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/ptc"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// env is a root scope with a registry and a runner.
type env struct {
	root *ctx.Context
	reg  *toolregistry.Registry
	r    *ptc.Runner
}

// childEnv is newEnv for a process that is not running a test: a plain root scope, and a
// function that disposes of it.
func childEnv(limit int64) (*env, func(), error) {
	root := ctx.New(ctx.Options{Logger: slog.New(slog.DiscardHandler)})
	dispose := func() { _ = root.Scope().Dispose(context.Background()) }
	if _, err := root.Plugin(toolregistry.Plugin, nil); err != nil {
		return nil, dispose, err
	}
	if err := root.Settle(context.Background()); err != nil {
		return nil, dispose, err
	}
	reg, _ := toolregistry.Key.Get(root)
	for _, tl := range probeTools() {
		if _, err := reg.Register(root, tl); err != nil {
			return nil, dispose, err
		}
	}
	l := defaults()
	l.MaxMemoryBytes, l.CPUTimeMs = limit, 30_000
	r, err := ptc.New(reg, ptc.Options{Limits: l, Logger: slog.New(slog.DiscardHandler)})
	return &env{root: root, reg: reg, r: r}, dispose, err
}

func newEnv(t testing.TB, limits ptc.Limits, tools ...toolregistry.Tool) *env {
	t.Helper()
	root := ctxtest.New(t)
	reg := ctxtest.MountService(t, root, toolregistry.Plugin, nil, toolregistry.Key)
	for _, tl := range tools {
		if _, err := reg.Register(root, tl); err != nil {
			t.Fatal(err)
		}
	}
	r, err := ptc.New(reg, ptc.Options{Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	return &env{root: root, reg: reg, r: r}
}

func (e *env) run(code string) *ptc.Outcome {
	return e.r.Run(context.Background(), e.root, ptc.Program{Code: code, CallID: "c1"})
}

// textTool returns a tool that answers with f(args).
func textTool(name string, readOnly bool, f func(args map[string]any) (string, error)) toolregistry.Tool {
	meta := map[string]string{}
	if readOnly {
		meta["readOnlyHint"] = "true"
	}
	return toolregistry.Tool{
		Name: name, Description: "test tool " + name, Meta: meta,
		Execute: func(_ context.Context, call *toolregistry.Call) (*toolregistry.Result, error) {
			var args map[string]any
			_ = json.Unmarshal(call.Args, &args)
			s, err := f(args)
			if err != nil {
				return nil, err
			}
			return toolregistry.TextResult(s), nil
		},
	}
}

func defaults() ptc.Limits {
	var l ptc.Limits
	l.Default()
	return l
}
