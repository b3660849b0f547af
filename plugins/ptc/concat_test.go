package ptc_test

import "testing"

// Concatenation rewritten into the helpers' calls (concat.go) means what the language
// says: the conversions, their order, the targets of += evaluated once, templates and their
// tags, in programs and in code built at run time.
func TestConcatenationKeepsItsMeaning(t *testing.T) {
	e := probeEnv(t, 2*probeLimit)
	cases := []struct{ name, code, want string }{
		{"numbers and strings", `return [1 + 2, "a" + 1, 1 + "a", 1.5 + 2, null + 1, true + 1, "x" + null + undefined, [1, 2] + [3], 1 + 2 + "3", "1" + 2 + 3]`,
			`[3,"a1","1a",3.5,1,2,"xnullundefined","1,23","33","123"]`},
		{"undefined is NaN", `return Number.isNaN(undefined + 1)`, `true`},
		{"primitives written as String writes them", "const xs = [-0, 1e21, 1.5e-7, NaN, -Infinity, 2 ** 53, 0.1 + 0.2, 123456789012, -5, true, false, null, undefined, 1 / 3]; " +
			"return [xs.filter((v) => \"\" + v !== String(v) || v + \"\" !== String(v) || `${v}` !== String(v) || `<${v}>` !== \"<\" + String(v) + \">\").map(String), 0.1 + 0.2, 2 ** 53 + 2, String(1 / (-0 + -0)), String(1 / (-0 + 0))]",
			`[[],0.30000000000000004,9007199254740994,"-Infinity","Infinity"]`},
		{"objects convert by valueOf first", `const o = {valueOf() { return 2 }, toString() { return "x" }}; return [o + 1, "" + o, ` + "`${o}`" + `]`, `[3,"2","x"]`},
		{"Symbol.toPrimitive sees the hint", `const o = {[Symbol.toPrimitive](h: string) { return h }}; return [o + "", ` + "`${o}`" + `, String(o)]`, `["default","string","string"]`},
		{"dates and functions", `return [typeof (new Date(0) + 1), (new Date(0) + 1).endsWith("1"), String((function f() {}) + "").startsWith("function f")]`, `["string",true,true]`},
		{"objects without a primitive", `try { return Object.create(null) + "" } catch (e) { return e instanceof TypeError }`, `true`},
		{"symbols throw", `const r = []; try { Symbol() + "" } catch (e) { r.push(e instanceof TypeError) } try { ` + "`${Symbol()}`" + ` } catch (e) { r.push(e instanceof TypeError) } return r`, `[true,true]`},
		{"order of evaluation", `const log: string[] = []; const v = (n: string) => ({valueOf() { log.push("valueOf " + n); return 1 }}); (log.push("left"), v("a")) + (log.push("right"), v("b")); return log`,
			`["left","right","valueOf a","valueOf b"]`},
		{"template order", `const log: string[] = []; const v = (n: string) => ({toString() { log.push("toString " + n); return n }}); ` + "`${(log.push(\"a\"), v(\"a\"))}-${(log.push(\"b\"), v(\"b\"))}`" + `; return log`,
			`["a","toString a","b","toString b"]`},
		{"+= on names and members", `let s = "a"; s += "b"; s += 1; const o: any = {k: "x"}; o.k += "y"; o["k"] += "z"; const i = "k"; o[i] += "!"; return [s, o.k]`, `["ab1","xyz!"]`},
		{"+= evaluates a computed target once", `let n = 0; const arr = ["a", "b"]; arr[n++] += "!"; let gets = 0, calls = 0; const o = {get k() { gets++; return "v" }, set k(x) { this.v = x }, v: ""}; const f = () => (calls++, o); f().k += "w"; return [arr, n, gets, calls, o.v]`,
			`[["a!","b"],1,1,1,"vw"]`},
		{"+= reads before the right side", `const o = {k: "a"}; const at = () => o; at().k += (o.k = "changed", "b"); let s = "x"; s += (s = "y", "z"); return [o.k, s]`, `["ab","xz"]`},
		{"+= on a constant", `const c = "a"; try { (c as any) += "b" } catch (e) { return e instanceof TypeError }`, `true`},
		{"+= on private fields and super", `class A { #s = "a"; get p() { return "p" } add(t: string) { this.#s += t; return this.#s } } class B extends A { q() { let r = super.p; r += "!"; return r } } return [new A().add("b"), new B().q()]`,
			`["ab","p!"]`},
		{"templates", "const x = 1; return [`a${x}b${\"c\"}d`, `${x}`, `${`in${x}`}out`, `\\u{1F600}${x}`.length, `plain`, `${\"\"}${\"\"}`]", `["a1bcd","1","in1out",3,"plain",""]`},
		{"tagged templates keep their pieces", "const tag = (s: TemplateStringsArray, ...v: any[]) => [s.raw, v]; return [tag`a${1 + 1}\\n${\"b\"}`, String.raw`x\\ty${2}`]", `[[["a","\\n",""],[2,"b"]],"x\\ty2"]`},
		{"unicode", `const s = "é" + "\uD800"; return [s.length, s.charCodeAt(1), ("a" + "😀").length]`, `[2,55296,3]`},
		{"in eval and Function", "return [eval(\"'a' + 1\"), eval(\"var g = 1; g += 2; g\"), new Function(\"a\", \"b\", \"return `${a}-${b}` + a\")(1, 2)]", `["a1",3,"1-21"]`},
		{"long strings under the budget", `const s = "x".repeat(1e6); return [(s + s).length, ` + "`${s}${s}`" + `.length, (s + 1).length]`, `[2000000,2000000,1000001]`},
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
