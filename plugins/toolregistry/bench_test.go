package toolregistry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// noopResult is what the no-op tool returns: a prebuilt result, so that neither side of
// the comparison measures the tool's own allocations.
var noopResult = toolregistry.TextResult("ok")

func noop(context.Context, *toolregistry.Call) (*toolregistry.Result, error) { return noopResult, nil }

// benchRegistry mounts a registry with a no-op tool registered at the root.
func benchRegistry(b testing.TB, tools ...toolregistry.Tool) (*ctx.Context, *toolregistry.Registry) {
	b.Helper()
	root := ctxtest.New(b)
	reg := ctxtest.MountService(b, root, toolregistry.Plugin, nil, toolregistry.Key)
	for _, tl := range append(tools, toolregistry.Tool{Name: "noop", Execute: noop}) {
		if _, err := reg.Register(root, tl); err != nil {
			b.Fatal(err)
		}
	}
	return root, reg
}

// BenchmarkExecuteNoop runs a no-op tool through the whole pipeline: lookup, argument
// check, policy chain, timeout, execution, post-execute chain, output cap, history and
// the executed event.
func BenchmarkExecuteNoop(b *testing.B) {
	root, reg := benchRegistry(b)
	args := json.RawMessage(`{}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := reg.Execute(root, root, "noop", args, toolregistry.ExecOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// direct holds the no-op tool as a function value, as the registry does, so the baseline
// call is an indirect call the compiler cannot inline.
var direct = noop

// BenchmarkDirectCall calls the same function directly, the baseline for
// BenchmarkExecuteNoop.
func BenchmarkDirectCall(b *testing.B) {
	call := &toolregistry.Call{ID: "call_1", Tool: "noop", Args: json.RawMessage(`{}`)}
	fn := direct
	cx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fn(cx, call); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExecuteNoopParallel is BenchmarkExecuteNoop from every P at once.
func BenchmarkExecuteNoopParallel(b *testing.B) {
	root, reg := benchRegistry(b)
	args := json.RawMessage(`{}`)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := reg.Execute(root, root, "noop", args, toolregistry.ExecOptions{}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkExecuteValidated adds argument validation against a real schema.
func BenchmarkExecuteValidated(b *testing.B) {
	root, reg := benchRegistry(b, toolregistry.Tool{Name: "search", Execute: noop,
		Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"},"limit":{"type":"integer"}},"required":["q"]}`)})
	args := json.RawMessage(`{"q":"tool registry","limit":10}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := reg.Execute(root, root, "search", args, toolregistry.ExecOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkList200 lists 200 tools.
func BenchmarkList200(b *testing.B) {
	tools := make([]toolregistry.Tool, 199)
	for i := range tools {
		tools[i] = toolregistry.Tool{Name: fmt.Sprintf("tool%03d", i), Execute: noop}
	}
	root, reg := benchRegistry(b, tools...)
	b.ReportAllocs()
	for b.Loop() {
		if n := len(reg.List(root)); n != 200 {
			b.Fatal(n)
		}
	}
}
