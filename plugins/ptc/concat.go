package ptc

import (
	"reflect"
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
// rewritten the same way. The helpers are Go functions, which goja calls at about half the
// cost of JavaScript ones; only an object or a symbol takes a JavaScript slow path.

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

// concatHelpers builds the helpers' slow paths, which are JavaScript: the conversion of an
// object to a primitive as + does it, and String of an object or a symbol, with the
// originals they must not take from the program's globals. The common cases (numbers,
// strings, the other primitives) never leave Go: plus and str.
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
	const plusSlow = (a, b) => {
		a = primitive(a);
		b = primitive(b);
		if (typeof a === "string" || typeof b === "string") {
			const n = (typeof a === "string" ? a.length : 32) + (typeof b === "string" ? b.length : 32);
			if (n > small) room(n);
		}
		return a + b;
	};
	const plusAt = (plus) => (o, k) => {
		const key = typeof k === "symbol" ? k : String(k);
		const v = o[key];
		return (b) => (o[key] = plus(v, b));
	};
	const strSlow = (v) => typeof v === "symbol" ? "" + v : String(v);
	return [plusSlow, plusAt, strSlow];
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
		x.room("concatenation", fc.Argument(0).ToInteger())
		return goja.Undefined()
	}
	fns, err := build(goja.Undefined(), vm.ToValue(room), vm.ToValue(smallConcat), x.global("Reflect").Get("apply"),
		vm.Get("TypeError"), vm.Get("String"), goja.SymToPrimitive)
	if err != nil {
		return err
	}
	list := fns.ToObject(vm)
	x.plusSlow, _ = goja.AssertFunction(list.Get("0"))
	x.strSlow, _ = goja.AssertFunction(list.Get("2"))
	makePlusAt, _ := goja.AssertFunction(list.Get("1"))
	plus := vm.ToValue(x.plus)
	plusAt, err := makePlusAt(goja.Undefined(), plus)
	if err != nil {
		return err
	}
	g := vm.GlobalObject()
	for name, v := range map[string]goja.Value{plusName: plus, plusAtName: plusAt, strName: vm.ToValue(x.str), catName: vm.ToValue(x.cat)} {
		if err := g.DefineDataProperty(name, v, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
			return err
		}
	}
	return nil
}

// room asks the budget for a string of n characters that what builds, when it is not small.
func (x *run) room(what string, n int64) {
	if n > smallConcat {
		x.allow(what+" of "+strconv.FormatInt(n, 10)+" characters", n*bytesPerChar)
	}
}

// int64Type is what goja exports an integer number as.
var int64Type = reflect.TypeFor[int64]()

// plus is a + b. Two strings are measured and joined, a string and another primitive too
// (its ToString is short), two other primitives added as numbers; an object or a symbol on
// either side goes to the JavaScript slow path, which converts it as + does.
func (x *run) plus(fc goja.FunctionCall) goja.Value {
	a, b := fc.Argument(0), fc.Argument(1)
	if objectOrSymbol(a) || objectOrSymbol(b) {
		return x.invoke(x.plusSlow, goja.Undefined(), a, b)
	}
	sa, aStr := a.(goja.String)
	sb, bStr := b.(goja.String)
	switch {
	case aStr && !bStr:
		sb, bStr = x.primitiveString(b), true
	case bStr && !aStr:
		sa, aStr = x.primitiveString(a), true
	}
	if aStr && bStr {
		x.room("concatenation", int64(sa.Length())+int64(sb.Length()))
		return sa.Concat(sb)
	}
	if a.ExportType() == int64Type && b.ExportType() == int64Type {
		return x.vm.ToValue(a.ToInteger() + b.ToInteger()) // as goja adds two integers
	}
	return x.vm.ToValue(a.ToFloat() + b.ToFloat())
}

// str converts a template literal's substitution to a string as the template would: an
// object or a symbol by the JavaScript slow path (String, or the TypeError a symbol throws).
func (x *run) str(fc goja.FunctionCall) goja.Value {
	v := fc.Argument(0)
	switch v.(type) {
	case goja.String:
		return v
	case *goja.Object, *goja.Symbol:
		return x.invoke(x.strSlow, goja.Undefined(), v)
	}
	return x.primitiveString(v)
}

// primitiveString is a primitive other than a string or a symbol (a number, a boolean, null
// or undefined) as JavaScript writes it: goja's String of it ("1.5", "-1e+21", "NaN",
// "true", "null"). goja's ToString gives such a value back as it is.
func (x *run) primitiveString(v goja.Value) goja.String {
	s, _ := x.vm.ToValue(v.String()).(goja.String)
	return s
}

// objectOrSymbol reports whether v is an object or a symbol: what + converts in JavaScript.
func objectOrSymbol(v goja.Value) bool {
	switch v.(type) {
	case *goja.Object, *goja.Symbol:
		return true
	}
	return false
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
	x.room("template literal", n)
	var b goja.StringBuilder
	b.Grow(int(n))
	for _, a := range fc.Arguments {
		b.WriteString(a.(goja.String))
	}
	return b.String()
}

// concatCall is the helper call that replaces e, or nil when e concatenates nothing;
// prepareSource applies it to every expression of a program, each after its operands.
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
