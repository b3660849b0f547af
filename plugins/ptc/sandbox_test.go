package ptc_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cordisgo/harness/plugins/ptc"
)

// Each escape attempt is refused: the program sees no module system, no process, no file
// system, no host object, and whatever it does to the globals stays in its own interpreter.
func TestSandboxEscapes(t *testing.T) {
	e := newEnv(t, defaults(), textTool("echo", true, func(a map[string]any) (string, error) { return "ok", nil }))
	cases := []struct {
		name, code string
		want       string // in the value, or in the error when wantErr
		wantErr    bool
	}{
		{"require", `return typeof require`, `"undefined"`, false},
		{"require call", `require("fs")`, "ReferenceError: require is not defined", true},
		{"import", `import fs from "fs"; return 1`, "import and export are not available", true},
		{"dynamic import", `return await import("fs")`, "", true},
		{"process", `return [typeof process, typeof Deno, typeof Bun, typeof global, typeof window]`, `["undefined","undefined","undefined","undefined","undefined"]`, false},
		{"globals", `return Object.getOwnPropertyNames(globalThis).filter(n => !/^[A-Z]/.test(n) && !["globalThis","NaN","Infinity","undefined","eval","parseInt","parseFloat","isNaN","isFinite","decodeURI","decodeURIComponent","encodeURI","encodeURIComponent","escape","unescape"].includes(n)).sort()`, `["__ptc_cat","__ptc_plus","__ptc_plusAt","__ptc_str","atob","btoa","console","describe","sleep","tools"]`, false},
		{"concatenation helpers are read-only", `globalThis.__ptc_plus = () => "x"; return 1`, "Cannot assign to read only property '__ptc_plus'", true},
		{"concatenation helpers are reserved", `const __ptc_plus = (a: any, b: any) => a; return "a" + "b"`, "__ptc_plus is a name the sandbox keeps for itself", true},
		{"timers", `return [typeof setTimeout, typeof setInterval, typeof queueMicrotask, typeof fetch, typeof XMLHttpRequest, typeof WebAssembly]`, `["undefined","undefined","undefined","undefined","undefined","undefined"]`, false},
		{"Function reaches only the sandbox", `const g = Function("return this")(); return Object.keys(g.tools).concat(typeof g.process)`, `["echo","undefined"]`, false},
		{"eval", `return eval("typeof require + typeof tools")`, `"undefinedobject"`, false},
		{"constructor of a bridge function", `const F = tools.echo.constructor; return F("return typeof process")()`, `"undefined"`, false},
		{"bridge frozen", `"use strict"; tools.echo = () => 1; return 1`, "TypeError", true},
		{"bridge replaced", `globalThis.tools = {}; return Object.keys(tools)`, "Cannot assign to read only property 'tools'", true},
		{"bridge pollution", `Array.prototype.map = null; JSON.parse = () => 1; JSON.stringify = () => "x"; Object.freeze = null; const r = await tools.echo({a: [1]}); return r.content[0].text`, `"ok"`, false},
		{"promise pollution", `Promise.prototype.then = function () { throw new Error("hijacked") }; Promise.resolve = null; const r = await tools.echo({}); return r.content[0].text`, `"ok"`, false},
		// A program that makes every object a thenable changes what its own awaits see, and nothing else.
		{"thenable pollution", `Object.prototype.then = (r: any) => { delete Object.prototype.then; r(42) }; return await tools.echo({})`, `42`, false},
		{"sourcemap file read", "return eval('1\\n//# sourceMappingURL=/etc/passwd')", `1`, false},
		{"go internals", `return [typeof tools.echo.call, String(tools.echo).includes("native")]`, `["function",true]`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := e.run(c.code)
			if c.wantErr {
				if out.Err == nil || !strings.Contains(out.Err.Error(), c.want) {
					t.Fatalf("want an error with %q, got value %s err %v", c.want, out.Value, out.Err)
				}
				return
			}
			if out.Err != nil || string(out.Value) != c.want {
				t.Fatalf("want %s, got value %s err %v", c.want, out.Value, out.Err)
			}
		})
	}
	// The host is unaffected: a fresh run sees pristine globals.
	out := e.run(`return [typeof Object.prototype.then, typeof Array.prototype.map, JSON.stringify({a: 1})]`)
	if out.Err != nil || string(out.Value) != `["undefined","function","{\"a\":1}"]` {
		t.Fatalf("second run: %s %v", out.Value, out.Err)
	}
}

func TestLimits(t *testing.T) {
	l := defaults()
	l.CPUTimeMs = 500
	l.WallTimeMs = 60_000
	l.MaxOutputBytes = 1000
	l.MaxToolCalls = 20
	l.MaxMemoryBytes = 32 << 20
	l.MaxSleepMs = 50
	e := newEnv(t, l, textTool("echo", true, func(a map[string]any) (string, error) { return "ok", nil }))
	cases := []struct {
		name string
		code string
		want *ptc.Error
	}{
		{"infinite loop", `for (;;) {}`, ptc.ErrCPU},
		{"infinite loop with catch", `for (;;) { try { while (true) {} } catch (e) {} }`, ptc.ErrCPU},
		{"busy async loop", `for (;;) { await null }`, ptc.ErrCPU},
		{"one big string", `return "x".repeat(1 << 30).length`, ptc.ErrMemory},
		{"big array", `return new Array(1e9).fill(0).length`, ptc.ErrMemory},
		{"sparse array spread", `const a = []; a.length = 1e9; return [...a].length`, ptc.ErrMemory},
		{"array from", `return Array.from({length: 1e9}).length`, ptc.ErrMemory},
		{"typed array", `return new Float64Array(1e9).length`, ptc.ErrMemory},
		{"call flood", `const ps = []; for (;;) ps.push(tools.echo({}))`, ptc.ErrToolCallLimit},
		{"awaited flood", `for (let i = 0; i < 100; i++) await tools.echo({})`, ptc.ErrToolCallLimit},
		{"console flood", `for (;;) console.log("spam")`, ptc.ErrOutputLimit},
		{"big return", `return "y".repeat(5000)`, ptc.ErrOutputLimit},
		{"long sleep", `await sleep(60000)`, ptc.ErrException},
		{"stalled", `await new Promise(() => {})`, ptc.ErrStalled},
		{"cycle", `const a: any = {}; a.a = a; return a`, ptc.ErrInvalidOutput},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := e.run(c.code)
			if !errors.Is(out.Err, c.want) {
				t.Fatalf("want %v, got %v (value %.100s)", c.want.Kind, out.Err, out.Value)
			}
			t.Logf("%v (cpu %v, heap growth %d MiB)", out.Err, out.CPU, out.HeapGrowth>>20)
		})
	}
	// The output limit keeps the prefix.
	out := e.run(`console.log("a".repeat(600)); return "b".repeat(600)`)
	if !errors.Is(out.Err, ptc.ErrOutputLimit) || len(out.Captured) != 1000 || !strings.HasPrefix(out.Captured, "aaa") || !strings.HasSuffix(out.Captured, "bbb") {
		t.Fatalf("captured %d bytes: %v", len(out.Captured), out.Err)
	}
	res := out.Result()
	if !res.IsError || len(res.Content) != 2 || res.Content[1].Text != out.Captured {
		t.Fatalf("result %+v", res)
	}
	// The host still runs programs.
	if out := e.run(`return (await tools.echo({})).content[0].text`); out.Err != nil || string(out.Value) != `"ok"` {
		t.Fatalf("after the limits: %s %v", out.Value, out.Err)
	}
}

// Growth the guards cannot see is caught by the heap watcher; deep recursion by the stack
// bound. Both with a CPU budget that leaves them the time to trigger.
func TestMemoryAndStack(t *testing.T) {
	l := defaults()
	l.MaxMemoryBytes = 32 << 20
	e := newEnv(t, l)
	out := e.run(`const a = []; for (;;) a.push("x".repeat(1 << 16) + a.length)`)
	if !errors.Is(out.Err, ptc.ErrMemory) {
		t.Fatalf("allocation loop: %v", out.Err)
	}
	t.Logf("allocation loop: %v; heap growth seen %d MiB", out.Err, out.HeapGrowth>>20)
	out = e.run(`function f(n: number): number { return f(n + 1) + 1 } return f(0)`)
	if !errors.Is(out.Err, ptc.ErrException) || !strings.Contains(out.Err.Msg, "call stack") {
		t.Fatalf("recursion: %v", out.Err)
	}
}

func TestWallTime(t *testing.T) {
	l := defaults()
	l.WallTimeMs = 100
	l.MaxSleepMs = 10_000
	e := newEnv(t, l)
	out := e.run(`await sleep(5000); return 1`)
	if !errors.Is(out.Err, ptc.ErrTimeout) {
		t.Fatalf("got %v", out.Err)
	}
}

func TestCancelledBeforeStart(t *testing.T) {
	e := newEnv(t, defaults())
	cx, cancel := context.WithCancel(context.Background())
	cancel()
	out := e.r.Run(cx, e.root, ptc.Program{Code: "for (;;) {}"})
	if !errors.Is(out.Err, ptc.ErrCancelled) {
		t.Fatalf("got %v", out.Err)
	}
}
