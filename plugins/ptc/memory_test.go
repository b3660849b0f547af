package ptc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cordisgo/harness/plugins/ptc"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// memoryProbe is a program that, unguarded, allocates far past the memory limit through one
// allocation path.
type memoryProbe struct {
	name, code string
	want       *ptc.Error // the kind it must end with (nil: ErrMemory)
	text       string     // what the error must say, if anything in particular
}

// memoryProbes covers every allocation path a program has (docs/ptc.md, "Memory"); each
// allocates gigabytes unguarded, and reaches its path within probeLimit.
var memoryProbes = []memoryProbe{
	// Strings built by the built-ins.
	{name: "join separator", code: `return new Array(1e4).join("x".repeat(1e5)).length`},
	{name: "join elements", code: `return new Array(1e4).fill("x".repeat(1e5)).join("").length`},
	{name: "array toString", code: `return String(new Array(1e4).fill("x".repeat(1e5))).length`},
	{name: "array in a template", code: `return ` + "`${new Array(1e4).fill(\"x\".repeat(1e5))}`" + `.length`},
	{name: "join of objects", code: `const o = {toString: () => "x".repeat(1e5)}; return new Array(1e4).fill(o).join().length`},
	{name: "join of nested arrays", code: `const a = new Array(100).fill("x".repeat(1e5)); return new Array(1e4).fill(a).join().length`},
	{name: "join of a string's characters", code: `return Array.prototype.join.call("x".repeat(1e5), "y".repeat(1e5)).length`},
	{name: "toLocaleString", code: `return new Array(1e4).fill("x".repeat(1e5)).toLocaleString().length`},
	{name: "replace with a long replacement", code: `return "x".repeat(1e5).replace(/x/g, "y".repeat(1e5)).length`},
	{name: "replaceAll with a long replacement", code: `return "x".repeat(1e5).replaceAll("x", "y".repeat(1e5)).length`},
	{name: "replace with $'", code: "return \"x\".repeat(1e5).replaceAll(\"x\", \"$'\").length"},
	{name: "replace with $&", code: `return "x".repeat(1e5).replace(/x+/, "$&".repeat(1e4)).length`},
	{name: "replace with a function", code: `const big = "y".repeat(1e5); return "x".repeat(1e5).replace(/x/g, () => big).length`},
	{name: "replaceAll of many matches", code: `return "x".repeat(4e6).replaceAll("x", "yy").length`},
	{name: "replace of many regexp matches", code: `return "x".repeat(4e6).replace(/x/g, "yy").length`},
	{name: "repeat", code: `return "x".repeat(2 ** 30).length`},
	{name: "repeat of a long string", code: `return "x".repeat(1e5).repeat(1e5).length`},
	{name: "padStart", code: `return "x".padStart(2 ** 30).length`},
	{name: "padEnd", code: `return "x".padEnd(2 ** 30, "ab").length`},
	{name: "String.prototype.concat", code: `const s = "x".repeat(1e5); return s.concat(...new Array(1e4).fill(s)).length`},
	{name: "String.raw", code: `const s = "x".repeat(1e5); return String.raw({raw: new Array(1e4).fill(s)}).length`},
	{name: "normalize", code: `return "\uFDFA".repeat(4e6).normalize("NFKD").length`},
	{name: "toUpperCase", code: `return "\u00DF".repeat(4e6).toUpperCase().length`},
	{name: "encodeURIComponent", code: `return encodeURIComponent("\u0800".repeat(4e6)).length`},
	{name: "escape", code: `return escape("\u0800".repeat(4e6)).length`},
	{name: "atob and btoa", code: `return atob(btoa("x".repeat(4e6))).length`},

	// Concatenation, rewritten by compile into calls that ask the budget (concat.go).
	{name: "concatenation", code: `let s = "x"; for (;;) s += s`, text: "concatenation of"},
	{name: "template literal", code: "let s = \"x\"; for (;;) s = `${s}${s}`", text: "template literal of"},
	{name: "concatenation with +", code: `let s = "x"; for (;;) s = s + s`, text: "concatenation of"},
	{name: "concatenation of objects", code: `let s = "x"; const o = {toString: () => s}; for (;;) s = o + o`, text: "concatenation of"},
	{name: "concatenation into a member", code: `const o = {s: "x"}; for (;;) o.s += o.s`, text: "concatenation of"},
	{name: "concatenation into a computed member", code: `const a = ["x"]; const at = () => a; for (;;) at()[0] += a[0]`, text: "concatenation of"},
	{name: "concatenation in eval", code: `(globalThis as any).s = "x"; for (;;) eval("s += s")`, text: "concatenation of"},
	{name: "concatenation in a Function", code: `const twice = new Function("s", "return ` + "`${s}${s}`" + `"); let s = "x"; for (;;) s = twice(s)`, text: "template literal of"},
	{name: "string building in a loop", code: `const parts = []; for (;;) parts.push("x".repeat(1000) + parts.length)`},

	// Regular expressions and their results.
	{name: "split into characters", code: `return "x".repeat(4e6).split("").length`},
	{name: "split by a string", code: `return "xy".repeat(2e6).split("y").length`},
	{name: "split by a regexp", code: `return "x".repeat(4e6).split(/(x)/).length`},
	{name: "match", code: `return "x".repeat(4e6).match(/x/g).length`},
	{name: "matchAll spread", code: `return [..."x".repeat(4e6).matchAll(/x/g)].length`},
	{name: "a huge pattern", code: `return new RegExp("x".repeat(4e6)).source.length`},
	{name: "a huge pattern as a string", code: `return "x".match("x".repeat(4e6))`},

	// JSON.
	{name: "JSON.stringify of a repeated string", code: `return JSON.stringify(new Array(1e4).fill("x".repeat(1e5))).length`},
	{name: "JSON.stringify indented", code: `let o: any = 1; for (let i = 0; i < 2e4; i++) o = [o]; return JSON.stringify(o, null, 10).length`},
	{name: "JSON.stringify with a replacer", code: `const big = "x".repeat(1e5); return JSON.stringify(new Array(1e4).fill(0), (k, v) => k === "" ? v : big).length`},
	{name: "JSON.stringify with a property list", code: `const big = {a: "x".repeat(1e5)}; return JSON.stringify(new Array(1e4).fill(big), ["a"]).length`},
	{name: "JSON.parse of objects", code: `return JSON.parse("[" + "{},".repeat(2e6) + "{}]").length`},
	{name: "JSON.parse of numbers", code: `return JSON.parse("[" + "1,".repeat(3e6) + "1]").length`},

	// Arrays.
	{name: "Array constructor", code: `return new Array(1e9).fill(0).length`},
	{name: "array growth", code: `const a = []; for (;;) a.push(a.length)`},
	{name: "array of objects", code: `const a = []; for (;;) a.push({n: a.length})`},
	{name: "Array.from an array-like", code: `return Array.from({length: 1e9}).length`},
	{name: "Array.from a string", code: `return Array.from("x".repeat(4e6)).length`},
	{name: "spread of a string", code: `return [..."x".repeat(4e6)].length`},
	{name: "spread of a sparse array", code: `const a = []; a.length = 1e9; return [...a].length`},
	{name: "spread into arguments", code: `const a = []; a.length = 1e8; return Math.max(...a)`},
	{name: "fill of a long array", code: `const a = []; a.length = 1e9; return a.fill(0).length`},
	{name: "concat of one array many times", code: `const a = new Array(1e5).fill(0); return a.concat(...new Array(1e3).fill(a)).length`},
	{name: "flat of one array many times", code: `const a = new Array(1e5).fill(0); return new Array(1e3).fill(a).flat().length`},
	{name: "flat of a cyclic array", code: `const a: any[] = [1]; a.push(a); return a.flat(Infinity).length`},
	{name: "flatMap", code: `const a = new Array(1e5).fill(0); return new Array(1e4).fill(0).flatMap(() => a).length`},
	{name: "apply with a long array-like", code: `return Math.max.apply(null, {length: 1e9} as any)`},
	{name: "Reflect.apply", code: `return Reflect.apply(Math.max, null, {length: 1e9} as any)`},
	{name: "Promise.all of many", code: `return (await Promise.all(new Array(2e5).fill(0))).length`},
	{name: "generator spread", code: `function* g() { for (;;) yield "x".repeat(100) } return [...g()].length`},

	// Objects.
	{name: "object growth", code: `const o: any = {}; for (let i = 0; ; i++) o["k" + i] = i`},
	{name: "Map growth", code: `const m = new Map(); for (let i = 0; ; i++) m.set(i, "v" + i)`},
	{name: "Object.keys of a string", code: `return Object.keys("x".repeat(4e6)).length`},
	{name: "Object.entries of a large object", code: `const o: any = {}; for (let i = 0; i < 5e4; i++) o["k" + i] = i; return Object.entries(o).length`},
	{name: "Object.getOwnPropertyDescriptors", code: `return Object.keys(Object.getOwnPropertyDescriptors(new Array(1e5).fill(0))).length`},
	{name: "Object.assign of a string", code: `return Object.keys(Object.assign({}, "x".repeat(4e6))).length`},
	{name: "Reflect.ownKeys of a typed array", code: `return Reflect.ownKeys(new Uint8Array(1e7)).length`},
	{name: "object spread of a string", code: `return Object.keys({..."x".repeat(4e6)}).length`},
	{name: "object spread of a typed array", code: `return Object.keys({...new Uint8Array(1e7)}).length`},
	{name: "object rest of a string", code: `const {length, ...rest} = "x".repeat(4e6) as any; return Object.keys(rest).length`},

	// Typed arrays and buffers.
	{name: "typed array", code: `return new Float64Array(1e9).length`},
	{name: "ArrayBuffer", code: `return new ArrayBuffer(2 ** 31).byteLength`},
	{name: "typed array from an array-like", code: `return Uint8Array.from({length: 1e9}).length`},
	{name: "typed array copies", code: `const t = new Uint8Array(1e7); return [t.slice(), t.slice(), t.map((x) => x)].length`},
	{name: "typed array join", code: `return new Float64Array(5e5).fill(Math.PI).join("; ").length`},
	{name: "ArrayBuffer slice", code: `const b = new ArrayBuffer(1e7); return [b.slice(0), b.slice(0)].length`},

	// Code compiled at run time, and BigInt.
	{name: "eval of a huge source", code: `return eval("[" + "1,".repeat(2e6) + "]").length`},
	{name: "Function of a huge source", code: `return new Function("return [" + "1,".repeat(2e6) + "]")().length`},
	{name: "BigInt literal", code: `return String(1n << 10000000000n)`, want: ptc.ErrCompile, text: "BigInt is not available"},
	{name: "BigInt in eval", code: `return String(eval("1n << 10000000000n"))`, want: ptc.ErrException, text: "BigInt is not available"},
	{name: "BigInt global", code: `return typeof BigInt === "undefined" && typeof BigInt64Array === "undefined" ? "no BigInt" : "BigInt"`, want: &ptc.Error{}},

	// Through the bridge: a tool's huge result, a huge argument, huge output.
	{name: "a tool's huge result", code: `return (await tools.big({})).content[0].text.length`},
	{name: "a huge argument", code: `return (await tools.echo({s: new Array(1e4).fill("x".repeat(1e5))})).content.length`},
	{name: "console.log of a huge string", code: `console.log("x".repeat(4e6)); return 1`, want: ptc.ErrOutputLimit},
	{name: "an error with a huge message", code: `throw new Error("x".repeat(4e6))`, want: ptc.ErrException, text: "bytes in all)"},
}

// probeLimit is the memory limit the probes run with.
const probeLimit = 16 << 20

// probeTools are a tool whose result is 8 MiB of text (in its raw MCP form, which the
// registry does not cut; half the probe limit, which its parse would pass) and an echo.
func probeTools() []toolregistry.Tool {
	raw, _ := json.Marshal(map[string]any{"content": []any{map[string]string{"type": "text", "text": strings.Repeat("x", 8<<20)}}})
	big := toolregistry.Tool{Name: "big", Description: "a result of 8 MiB", Meta: map[string]string{"readOnlyHint": "true"},
		Execute: func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
			return &toolregistry.Result{Content: []toolregistry.Content{toolregistry.Text("x")}, Raw: raw}, nil
		}}
	return []toolregistry.Tool{big, textTool("echo", true, func(map[string]any) (string, error) { return "ok", nil })}
}

// probeEnv is a runner with the given memory limit and the probeTools.
func probeEnv(t testing.TB, limit int64) *env {
	l := defaults()
	l.MaxMemoryBytes = limit
	l.CPUTimeMs = 30_000
	return newEnv(t, l, probeTools()...)
}

// checkProbe reports how the run of p ended against what p wants.
func checkProbe(p memoryProbe, out *ptc.Outcome) error {
	want := p.want
	if want == nil {
		want = ptc.ErrMemory
	}
	if *want == (ptc.Error{}) { // a program that must succeed
		if out.Err != nil {
			return fmt.Errorf("want success, got %w", out.Err)
		}
		return nil
	}
	if out.Err == nil || !errors.Is(out.Err, want) {
		return fmt.Errorf("want %s, got %w (value %.80s)", want.Kind, out.Err, out.Value)
	}
	if p.text != "" && !strings.Contains(out.Err.Error(), p.text) {
		return fmt.Errorf("want an error saying %q, got %w", p.text, out.Err)
	}
	return nil
}

// Every allocation path ends in a clear error, and the host goes on running programs.
func TestMemoryProbes(t *testing.T) {
	e := probeEnv(t, probeLimit)
	for _, p := range memoryProbes {
		t.Run(p.name, func(t *testing.T) {
			out := e.run(p.code)
			if err := checkProbe(p, out); err != nil {
				t.Fatal(err)
			}
			t.Logf("%v (heap growth %d MiB)", out.Err, out.HeapGrowth>>20)
		})
	}
	if out := e.run(`return (await tools.echo({})).content[0].text`); out.Err != nil || string(out.Value) != `"ok"` {
		t.Fatalf("after the probes: %s %v", out.Value, out.Err)
	}
}

// The guarded built-ins behave as the language says: the programs below take the guards'
// slow paths (converting elements, metering replacements, counting matches, emulating a
// property list; with twice the probe limit, the subjects of 400,000 characters here are
// too long to reckon one match per character, and have their matches counted) and
// must give exactly what goja gives unguarded.
func TestGuardedBuiltinsKeepTheirMeaning(t *testing.T) {
	e := probeEnv(t, 2*probeLimit)
	cases := []struct{ name, code, want string }{
		{"join converts each element once", `let n = 0; const o = {toString() { n++; return "o" }}; return [[1, o, null, undefined, "s", [2, 3], true].join("-"), n]`, `["1-o---s-2,3-true",1]`},
		{"join default separator and holes", `const a = [1, , 3]; return [a.join(), String(a), a.toString()]`, `["1,,3","1,,3","1,,3"]`},
		{"join of a string", `return Array.prototype.join.call("abc", "+")`, `"a+b+c"`},
		{"toLocaleString", `return [1, "a", null, {toLocaleString: () => "L"}].toLocaleString()`, `"1,a,,L"`},
		{"concat", `return [1].concat([2, 3], 4, [[5]]).length`, `5`},
		{"flat and flatMap", `return [[1, [2, [3]]].flat(Infinity), [1, 2].flatMap((x) => [x, x * 10])]`, `[[1,2,3],[1,10,2,20]]`},
		{"replace patterns", "return \"a-b-c\".replace(/(\\w)-/g, \"[$1|$&|$$|$`|$'|$2|$01|$<n>]\")",
			`"[a|a-|$||b-c|$2|a|$<n>][b|b-|$|a-|c|$2|b|$<n>]c"`},
		{"replace patterns on a long subject", "const s = \"abcdefgh\".repeat(5e4); const r = s.replace(/(g)(h)/g, \"$2$1$$\"); return [r.length, r.slice(0, 12)]", `[450000,"abcdefhg$abc"]`},
		{"replaceAll with a string on a long subject", `const r = "abcdefgh".repeat(5e4).replaceAll("h", "$&$&"); return [r.length, r.slice(0, 10)]`, `[450000,"abcdefghha"]`},
		{"replace with a function", `return "a1b2".replace(/(\d)/g, (m, d, pos, s) => "<" + m + d + pos + s.length + ">")`, `"a<1114>b<2234>"`},
		{"replace with a string search", "return [\"aXbXc\".replace(\"X\", \"[$&$']\"), \"aXbXc\".replaceAll(\"X\", \"-\")]", `["a[XbXc]bXc","a-b-c"]`},
		{"split", `const s = "a,b,,c".repeat(1e4); return [s.split(",").length, s.split(/(,)/).length, "abc".split(""), "a,b,c".split(",", 2)]`, `[30001,60001,["a","b","c"],["a","b"]]`},
		{"split of a long string by a regexp", `return "abcdefg\n".repeat(5e4).split(/\n/).length`, `50001`},
		{"split of a unicode string by a regexp", `return ["é\nü\n".repeat(1e4).split(/\n(?=ü)/).length, "ééééééééééééééé\n".repeat(2.5e4).split(/\n/).length, "😀abcdefghijklm\n".repeat(2.5e4).split(/\n/).length]`, `[10001,25001,25001]`},
		{"match", `const s = "abcdefgh".repeat(5e4); return [s.match(/h/g).length, "abc".match(/(b)(c)/).slice(), [..."a1b2".matchAll(/\d/g)].map((m) => m.index)]`, `[50000,["bc","b","c"],[1,3]]`},
		{"normalize and case", `return ["\u00C5".normalize("NFD").length, "ß".toUpperCase(), "ABC".toLowerCase(), "\uFDFA".normalize("NFKD").length]`, `[2,"SS","abc",18]`},
		{"repeat and pad", `return ["ab".repeat(3), "5".padStart(3, "0"), "5".padEnd(3, "xy"), "a".concat(1, null, [2])]`, `["ababab","005","5xy","a1null2"]`},
		{"String.raw", "return [String.raw`a\\n${1 + 1}b${[3]}`, String.raw({raw: [\"x\", \"y\", \"z\"]}, 1, 2, 3)]", `["a\\n2b3","x1y2z"]`},
		{"escaping", `return [encodeURIComponent("a b&é"), escape("é!"), encodeURI("/a b")]`, `["a%20b%26%C3%A9","%E9%21","/a%20b"]`},
		{"JSON.stringify", `return JSON.stringify({a: [1, "x\n", null, undefined, () => 1], b: {c: true}, d: new Date(0), e: new Number(3), f: new String("s")})`,
			`"{\"a\":[1,\"x\\n\",null,null,null],\"b\":{\"c\":true},\"d\":\"1970-01-01T00:00:00.000Z\",\"e\":3,\"f\":\"s\"}"`},
		{"JSON.stringify indented", `return JSON.stringify({a: [1, {b: 2}], c: "x"}, null, 2)`, `"{\n  \"a\": [\n    1,\n    {\n      \"b\": 2\n    }\n  ],\n  \"c\": \"x\"\n}"`},
		{"JSON.stringify with a replacer function", `return JSON.stringify({a: 1, b: "x", c: {d: 2}}, function (k, v) { return typeof v === "number" ? v * 10 + (this === undefined ? 0 : 0) : v })`, `"{\"a\":10,\"b\":\"x\",\"c\":{\"d\":20}}"`},
		{"JSON.stringify with a property list", `return JSON.stringify({c: 3, a: 1, b: {a: 4, z: 5}, get g() { return 9 }}, ["b", "a", "g", 7, "a"], "\t")`,
			`"{\n\t\"b\": {\n\t\t\"a\": 4\n\t},\n\t\"a\": 1,\n\t\"g\": 9\n}"`},
		{"JSON.stringify toJSON and a long array", `const a = new Array(2e5).fill({toJSON: () => "t"}); return JSON.stringify(a).length`, `800001`},
		{"JSON.stringify escapes", `const s = JSON.stringify(["\u0001\"\\\u2028", "\ud800"]); return [s.length, s.includes("\\u0001"), s.includes("\\ud800")]`, `[24,true,true]`},
		{"JSON.parse", `return JSON.parse('{"a":[1,2,{"b":null}],"c":"d"}', (k, v) => typeof v === "number" ? v + 1 : v)`, `{"a":[2,3,{"b":null}],"c":"d"}`},
		{"Object built-ins", `const o = {a: 1, b: 2}; return [Object.keys("ab"), Object.entries(o), Object.assign({}, "ab", o), Reflect.ownKeys([1]), Object.keys(new Uint8Array(2))]`,
			`[["0","1"],[["a",1],["b",2]],{"0":"a","1":"b","a":1,"b":2},["0","length"],["0","1"]]`},
		{"object spread and rest", `const {a, ...rest} = {a: 1, b: 2, c: 3}; const s = {...rest, ..."xy", ...null, d: 4}; return [a, s]`, `[1,{"0":"x","1":"y","b":2,"c":3,"d":4}]`},
		{"typed arrays", `const t = Uint8Array.from([3, 1, 2]); return [Array.from(t.slice(1)), t.join("-"), Array.from(t.map((x) => x * 2)), new ArrayBuffer(4).slice(1).byteLength, Array.from(new Uint8Array(new ArrayBuffer(8), 2, 3))]`,
			`[[1,2],"3-1-2",[6,2,4],3,[0,0,0]]`},
		{"eval and Function", `const f = new Function("a", "b", "return a + b"); return [eval("1 + 2"), f(2, 3), (async function () {}).constructor("return 4") instanceof Function, Function() instanceof Function]`, `[3,5,true,true]`},
		{"Function kinds", `class F extends Function {} const g = (function* () {}).constructor("a", "yield a + 1"); return [new F("return 1") instanceof F, new F("return 1")(), [...g(1)], String(new Function("a", "return a + 1"))]`,
			`[true,1,[2],"function anonymous(a\n) {\nreturn a + 1\n}"]`},
		{"apply and spread", `return [Math.max.apply(null, [1, 5, 2]), Reflect.apply(Math.min, null, [4, 3]), Math.max(...[7, 8]), [..."ab"], [...new Set([1, 1, 2])], Array.from(new Map([[1, 2]]))]`,
			`[5,3,8,["a","b"],[1,2],[[1,2]]]`},
		{"regexps keep their state", `const r = /a/g; r.lastIndex = 1; const m = "aaa".match(r); return [m.length, r.lastIndex]`, `[3,0]`},
		{"instanceof the guarded constructors", `class A extends Array {} return [[] instanceof Array, new A() instanceof A, new A() instanceof Array, new Uint8Array(1) instanceof Uint8Array, (() => 1) instanceof Function, /x/ instanceof RegExp, new ArrayBuffer(1) instanceof ArrayBuffer, {} instanceof Array]`,
			`[true,true,true,true,true,true,true,false]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := e.run(c.code)
			if out.Err != nil || string(out.Value) != c.want {
				t.Fatalf("got %s (%v)\nwant %s", out.Value, out.Err, c.want)
			}
		})
	}
}
