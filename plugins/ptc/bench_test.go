package ptc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/cordisgo/harness/plugins/ptc"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// benchTools are n read-only tools with a small schema each, like a server's.
func benchTools(n int) []toolregistry.Tool {
	var ts []toolregistry.Tool
	for i := range n {
		tl := textTool(fmt.Sprintf("mcp__bench__tool_%02d", i), true, func(map[string]any) (string, error) { return "ok", nil })
		tl.Parameters = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)
		ts = append(ts, tl)
	}
	return ts
}

// BenchmarkStart is a whole run of a program whose first statement returns: compiled (a
// program with type annotations goes through esbuild first), a fresh interpreter with 50
// tools bound, the statement, the result encoded.
func BenchmarkStart(b *testing.B) {
	e := newEnv(b, defaults(), benchTools(50)...)
	for _, p := range []struct{ name, code string }{
		{"js", `return 1`},
		{"ts", `const n: number = 1; return n`},
	} {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if out := e.run(p.code); out.Err != nil {
					b.Fatal(out.Err)
				}
			}
		})
	}
}

// BenchmarkCallOverhead compares 100 awaited calls of a no-op tool from a program with 100
// direct Registry.Execute calls of the same tool; the metric overhead-ns/call is what the
// program's bridge adds per call (the program's start, measured once, left out).
func BenchmarkCallOverhead(b *testing.B) {
	const calls = 100
	e := newEnv(b, defaults(), benchTools(50)...)
	args := json.RawMessage(`{"text":"x"}`)
	program := fmt.Sprintf(`for (let i = 0; i < %d; i++) await tools.mcp__bench__tool_07({text: "x"}); return 1`, calls)
	var direct, viaProgram, start time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		for range calls {
			if _, err := e.reg.Execute(context.Background(), e.root, "mcp__bench__tool_07", args, toolregistry.ExecOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		t1 := time.Now()
		if out := e.run(`return 1`); out.Err != nil {
			b.Fatal(out.Err)
		}
		t2 := time.Now()
		if out := e.run(program); out.Err != nil {
			b.Fatal(out.Err)
		}
		direct += t1.Sub(t0)
		start += t2.Sub(t1)
		viaProgram += time.Since(t2)
	}
	n := float64(b.N * calls)
	b.ReportMetric(float64(direct.Nanoseconds())/n, "registry-ns/call")
	b.ReportMetric(float64((viaProgram-start-direct).Nanoseconds())/n, "overhead-ns/call")
}

var _ = ptc.Program{}

// BenchmarkConcatenation is the cost of the concatenation guard (concat.go) on loops that
// do little else: 100,000 additions of numbers, 10,000 appends to a string, 10,000
// template literals (each op includes one program start).
func BenchmarkConcatenation(b *testing.B) {
	e := newEnv(b, defaults())
	for _, p := range []struct{ name, code string }{
		{"numbers", `let s = 0; for (let i = 0; i < 1e5; i++) s = s + i; return s`},
		{"appends", `let s = ""; for (let i = 0; i < 1e4; i++) s += "ab"; return s.length`},
		{"templates", "let n = 0; for (let i = 0; i < 1e4; i++) n += `${i}-${i}`.length; return n"},
	} {
		b.Run(p.name, func(b *testing.B) {
			for b.Loop() {
				if out := e.run(p.code); out.Err != nil {
					b.Fatal(out.Err)
				}
			}
		})
	}
}
