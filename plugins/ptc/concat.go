package ptc

import (
	"strconv"
	"strings"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/token"
	"github.com/dop251/goja/unistring"
)

// Concatenation is the one allocation path that is not a built-in: `s + s` and `${s}${s}`
// are single instructions of the interpreter, which copy both strings in one Go call that
// neither the budget nor the interrupt can reach. The heap watcher stops the run after such
// an instruction, but it samples from another goroutine, and a collection waiting to stop
// the world cannot stop a goroutine inside a long copy: the watcher can miss a whole
// doubling, and then the next one asks the allocator for four times what the program held
// (measured: 896 MiB of growth at a 256 MiB limit under load, and once a 1 GiB request that
// crashed a process under an address-space limit).
//
// So compile rewrites every concatenation into a call of a helper that asks the budget
// first, like the guarded built-ins:
//
//	a + b           ->  __ptc_plus(a, b)
//	x += b          ->  x = __ptc_plus(x, b)            (x an identifier, or o.k / o[k] / this.k with o and k plain names or literals)
//	f().k += b      ->  __ptc_plusAt(f(), "k")(b)       (any other member: its object and key are evaluated once)
//	`a${x}b${y}`    ->  __ptc_cat("a", __ptc_str(x), "b", __ptc_str(y))
//
// The helpers keep the operators' meaning, order of evaluation included: __ptc_plus
// converts objects to primitives as + does (Symbol.toPrimitive, then valueOf, then
// toString) before it measures, and __ptc_str converts one substitution when the template
// would. Tagged templates build no string and are left alone. The names are reserved: a
// program that names one does not compile. Code compiled at run time (eval, Function) is
// rewritten the same way.

// concatPrefix starts every helper's name, which programs may not use.
const concatPrefix = "__ptc_"

// The helpers' global names.
const (
	plusName   = concatPrefix + "plus"
	plusAtName = concatPrefix + "plusAt"
	strName    = concatPrefix + "str"
	catName    = concatPrefix + "cat"
)

// smallConcat is the length in characters below which a concatenation does not ask the
// budget (smallAlloc's worth of characters).
const smallConcat = smallAlloc / bytesPerChar

// concatHelpers builds the helpers that are JavaScript (so the common case never leaves
// the interpreter) from the budget's check and the originals they must not take from the
// program's globals.
var concatHelpers = goja.MustCompile("concat.js", `(function (room, small, apply, TypeError, String, toPrimitive) {
	"use strict";
	const isObject = (v) => v !== null && (typeof v === "object" || typeof v === "function");
	const primitive = (v) => {
		if (!isObject(v)) return v;
		const exotic = v[toPrimitive];
		if (exotic !== undefined && exotic !== null) {
			if (typeof exotic !== "function") throw new TypeError("Symbol.toPrimitive is not a function");
			const r = apply(exotic, v, ["default"]);
			if (isObject(r)) throw new TypeError("Cannot convert object to primitive value");
			return r;
		}
		let f = v.valueOf;
		if (typeof f === "function") {
			const r = apply(f, v, []);
			if (!isObject(r)) return r;
		}
		f = v.toString;
		if (typeof f === "function") {
			const r = apply(f, v, []);
			if (!isObject(r)) return r;
		}
		throw new TypeError("Cannot convert object to primitive value");
	};
	const plus = (a, b) => {
		if (typeof a === "string") {
			if (typeof b === "string") {
				if (a.length + b.length > small) room(a.length + b.length);
				return a + b;
			}
		} else if (typeof a === "number" && typeof b === "number") {
			return a + b;
		}
		a = primitive(a);
		b = primitive(b);
		if (typeof a === "string" || typeof b === "string") {
			const n = (typeof a === "string" ? a.length : 32) + (typeof b === "string" ? b.length : 32);
			if (n > small) room(n);
		}
		return a + b;
	};
	const plusAt = (o, k) => {
		const key = typeof k === "symbol" ? k : String(k);
		const v = o[key];
		return (b) => (o[key] = plus(v, b));
	};
	const str = (v) => typeof v === "string" ? v : typeof v === "symbol" ? "" + v : String(v);
	return [plus, plusAt, str];
})`, true)

// guardConcatenation installs the helpers the compiled program calls, as globals that the
// program can neither write nor delete. It takes the originals of Reflect.apply and String
// before guardFunctions wraps them.
func (x *run) guardConcatenation() error {
	vm := x.vm
	mk, err := vm.RunProgram(concatHelpers)
	if err != nil {
		return err
	}
	build, _ := goja.AssertFunction(mk)
	room := func(fc goja.FunctionCall) goja.Value {
		n := fc.Argument(0).ToInteger()
		x.allow("concatenation of "+strconv.FormatInt(n, 10)+" characters", n*bytesPerChar)
		return goja.Undefined()
	}
	fns, err := build(goja.Undefined(), vm.ToValue(room), vm.ToValue(smallConcat), x.global("Reflect").Get("apply"),
		vm.Get("TypeError"), vm.Get("String"), goja.SymToPrimitive)
	if err != nil {
		return err
	}
	list := fns.ToObject(vm)
	g := vm.GlobalObject()
	for i, name := range []string{plusName, plusAtName, strName} {
		if err := g.DefineDataProperty(name, list.Get(strconv.Itoa(i)), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
			return err
		}
	}
	return g.DefineDataProperty(catName, vm.ToValue(x.cat), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
}

// cat joins a template literal's pieces (strings: its text and its substitutions, each
// converted by __ptc_str) once the budget has room for them.
func (x *run) cat(fc goja.FunctionCall) goja.Value {
	var n int64
	for _, a := range fc.Arguments {
		s, ok := a.(goja.String)
		if !ok {
			panic(x.vm.NewTypeError(catName + " joins strings"))
		}
		n += int64(s.Length())
	}
	if n > smallConcat {
		x.allow("template literal of "+strconv.FormatInt(n, 10)+" characters", n*bytesPerChar)
	}
	var b goja.StringBuilder
	b.Grow(int(n))
	for _, a := range fc.Arguments {
		b.WriteString(a.(goja.String))
	}
	return b.String()
}

// rewriteConcatenation rewrites the concatenations of a syntax tree into calls of the
// helpers, in place, each after its operands.
func rewriteConcatenation(p *ast.Program) { walkSyntax(p, func(any) {}, concatCall) }

// concatCall is the helper call that replaces e, or nil when e concatenates nothing.
func concatCall(e ast.Expression) ast.Expression {
	switch n := e.(type) {
	case *ast.BinaryExpression:
		if n.Operator == token.PLUS {
			return helperCall(plusName, n.Left, n.Right)
		}
	case *ast.AssignExpression:
		if n.Operator != token.PLUS {
			return nil
		}
		if plainTarget(n.Left) {
			return &ast.AssignExpression{Operator: token.ASSIGN, Left: n.Left, Right: helperCall(plusName, n.Left, n.Right)}
		}
		var obj, key ast.Expression
		switch t := n.Left.(type) {
		case *ast.DotExpression:
			obj, key = t.Left, stringLiteral(t.Identifier.Idx, t.Identifier.Name)
		case *ast.BracketExpression:
			obj, key = t.Left, t.Member
		default:
			return nil // super or a private name of a computed object: left to the watcher
		}
		return &ast.CallExpression{Callee: helperCall(plusAtName, obj, key), LeftParenthesis: n.Right.Idx0(),
			ArgumentList: []ast.Expression{n.Right}, RightParenthesis: n.Right.Idx1()}
	case *ast.TemplateLiteral:
		if n.Tag != nil || len(n.Expressions) == 0 {
			return nil
		}
		var parts []ast.Expression
		for i, el := range n.Elements {
			if el.Parsed != "" {
				parts = append(parts, stringLiteral(el.Idx, el.Parsed))
			}
			if i < len(n.Expressions) {
				parts = append(parts, helperCall(strName, n.Expressions[i]))
			}
		}
		c := helperCall(catName, parts...)
		c.Callee.(*ast.Identifier).Idx, c.LeftParenthesis, c.RightParenthesis = n.OpenQuote, n.OpenQuote, n.CloseQuote
		return c
	}
	return nil
}

// plainTarget reports whether a += target can be read and written again as it is written
// without evaluating anything twice that could tell: a name, or a member of a name, this
// or super whose key is a name or a literal.
func plainTarget(e ast.Expression) bool {
	plainObject := func(e ast.Expression) bool {
		switch e.(type) {
		case *ast.Identifier, *ast.ThisExpression, *ast.SuperExpression:
			return true
		}
		return false
	}
	switch t := e.(type) {
	case *ast.Identifier:
		return true
	case *ast.DotExpression:
		return plainObject(t.Left)
	case *ast.PrivateDotExpression:
		return plainObject(t.Left)
	case *ast.BracketExpression:
		switch t.Member.(type) {
		case *ast.Identifier, *ast.StringLiteral, *ast.NumberLiteral:
			return plainObject(t.Left)
		}
	}
	return false
}

// helperCall calls the helper name with args, at the first argument's position.
func helperCall(name string, args ...ast.Expression) *ast.CallExpression {
	var at, end file.Idx
	if len(args) > 0 {
		at, end = args[0].Idx0(), args[len(args)-1].Idx1()
	}
	return &ast.CallExpression{Callee: &ast.Identifier{Name: unistring.NewFromString(name), Idx: at}, LeftParenthesis: at,
		ArgumentList: args, RightParenthesis: end}
}

// stringLiteral is a string literal of s at idx.
func stringLiteral(idx file.Idx, s unistring.String) *ast.StringLiteral {
	return &ast.StringLiteral{Idx: idx, Literal: strconv.Quote(s.String()), Value: s}
}

// reservedName reports whether a program's identifier is one the helpers keep for
// themselves.
func reservedName(name string) bool { return strings.HasPrefix(name, concatPrefix) }
