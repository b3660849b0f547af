package ptc

import (
	"math"
	"reflect"
	"strconv"

	"github.com/dop251/goja"
)

// The allocation guards: the built-ins whose allocation the program sizes, wrapped so that
// the run refuses a call before it allocates more than the run has left (allow), and the
// Go loops that call back into the run stopped there once the run is stopped (checkpoint).
// memory.go has the budget and the watcher; guard_text.go the strings, regular
// expressions and JSON.

// What the guards count, in bytes (measured on goja's values; docs/ptc.md has the table).
const (
	// bytesPerChar is one UTF-16 unit of a string being built: ASCII strings take one byte
	// a character and unicode ones two, and a builder may double its buffer.
	bytesPerChar = 2
	// bytesPerElement is one element of an array a built-in builds: a value, its slot and
	// slack.
	bytesPerElement = 64
	// bytesPerPiece is one string value in an array a built-in builds (split's pieces,
	// matches); bytesPerKey one property name (Object.keys and the like).
	bytesPerPiece = 48
	bytesPerKey   = 112
	// bytesPerProperty is one property of an object a built-in builds (Object.assign).
	bytesPerProperty = 350
	// bytesPerEntry is one [key, value] pair or property descriptor.
	bytesPerEntry = 800
	// bytesPerSourceChar is one character of source compiled at run time (eval, Function).
	bytesPerSourceChar = 200
)

// maxElements is the longest array the built-ins may work on. Longer ones are refused
// whatever memory is left: the built-ins loop over every index (holes included) without
// an interrupt, so a sparse array of a billion would run for minutes.
func (x *run) maxElements() int64 { return x.l.MaxMemoryBytes / bytesPerElement }

// guard installs the allocation guards and takes away BigInt (its arithmetic, 1n << 10n **
// 10n, allocates without bound inside one operator; compile refuses its literals).
func (x *run) guard() error {
	vm := x.vm
	g := vm.GlobalObject()
	for _, name := range []string{"BigInt", "BigInt64Array", "BigUint64Array"} {
		if err := g.Delete(name); err != nil {
			return err
		}
	}
	dv := x.proto("DataView")
	for _, name := range []string{"getBigInt64", "getBigUint64", "setBigInt64", "setBigUint64"} {
		if err := dv.Delete(name); err != nil {
			return err
		}
	}
	for _, install := range []func() error{x.guardConcatenation, x.guardArrays, x.guardObjects, x.guardTypedArrays, x.guardFunctions, x.guardIterators, x.guardStrings, x.guardRegExps, x.guardJSON} {
		if err := install(); err != nil {
			return err
		}
	}
	return nil
}

// global returns the global object name.
func (x *run) global(name string) *goja.Object { return x.vm.Get(name).ToObject(x.vm) }

// proto returns name.prototype.
func (x *run) proto(name string) *goja.Object { return x.global(name).Get("prototype").ToObject(x.vm) }

// wrapper is a guarded built-in: orig is the function it replaces.
type wrapper func(orig goja.Callable, fc goja.FunctionCall) goja.Value

// wrap replaces o[name] (a function) with w.
func (x *run) wrap(o *goja.Object, name string, w wrapper) error {
	orig, ok := goja.AssertFunction(o.Get(name))
	if !ok {
		return nil
	}
	return o.DefineDataProperty(name, x.native(orig, w), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// wrapSymbol replaces o[sym] (a function) with w.
func (x *run) wrapSymbol(o *goja.Object, sym *goja.Symbol, w wrapper) error {
	orig, ok := goja.AssertFunction(o.GetSymbol(sym))
	if !ok {
		return nil
	}
	return o.DefineDataPropertySymbol(sym, x.native(orig, w), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// check wraps o[name] with a check that runs before the original.
func (x *run) check(o *goja.Object, name string, check func(this goja.Value, args []goja.Value)) error {
	return x.wrap(o, name, func(orig goja.Callable, fc goja.FunctionCall) goja.Value {
		check(fc.This, fc.Arguments)
		return x.invoke(orig, fc.This, fc.Arguments...)
	})
}

func (x *run) native(orig goja.Callable, w wrapper) goja.Value {
	return x.vm.ToValue(func(fc goja.FunctionCall) goja.Value { return w(orig, fc) })
}

// invoke calls f, rethrowing what it throws.
func (x *run) invoke(f goja.Callable, this goja.Value, args ...goja.Value) goja.Value {
	v, err := f(this, args...)
	if err != nil {
		panic(err)
	}
	return v
}

// guardConstructor replaces the global constructor name with a proxy that checks each call
// and construction first. The proxy keeps the prototype, so instanceof and subclassing
// behave as before.
func (x *run) guardConstructor(name string, check func(args []goja.Value)) error {
	target := x.vm.Get(name)
	if target == nil || goja.IsUndefined(target) {
		return nil
	}
	p, err := x.guardedConstructor(target.ToObject(x.vm), func(args []goja.Value) *goja.Object {
		check(args)
		return nil
	})
	if err != nil {
		return err
	}
	return x.vm.GlobalObject().DefineDataProperty(name, p, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
}

// guardedConstructor is a proxy of the constructor obj that runs check before each call and
// construction; when check returns an object, that object is the result in place of the
// original's (constructed, it takes the prototype of the new target, as the original's
// would).
func (x *run) guardedConstructor(obj *goja.Object, check func(args []goja.Value) *goja.Object) (goja.Value, error) {
	call, _ := goja.AssertFunction(obj)
	ctor, _ := goja.AssertConstructor(obj)
	var pv goja.Value // the proxy
	// goja's instanceof does not look through a proxy: the constructor gets a
	// Symbol.hasInstance of its own that asks the original's question of the constructor
	// (or of a subclass of it).
	hasInstance, _ := goja.AssertFunction(x.proto("Function").GetSymbol(goja.SymHasInstance))
	if err := obj.DefineDataPropertySymbol(goja.SymHasInstance, x.vm.ToValue(func(fc goja.FunctionCall) goja.Value {
		this := fc.This
		if this.SameAs(pv) {
			this = obj
		}
		return x.invoke(hasInstance, this, fc.Arguments...)
	}), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
		return nil, err
	}
	p := x.vm.NewProxy(obj, &goja.ProxyTrapConfig{
		Apply: func(_ *goja.Object, this goja.Value, args []goja.Value) goja.Value {
			if made := check(args); made != nil {
				return made
			}
			return x.invoke(call, this, args...)
		},
		Construct: func(_ *goja.Object, args []goja.Value, newTarget *goja.Object) *goja.Object {
			if made := check(args); made != nil {
				if !newTarget.SameAs(pv) {
					if proto, ok := newTarget.Get("prototype").(*goja.Object); ok {
						if err := made.SetPrototype(proto); err != nil {
							panic(err)
						}
					}
				}
				return made
			}
			o, err := ctor(newTarget, args...)
			if err != nil {
				panic(err)
			}
			return o
		},
	})
	pv = x.vm.ToValue(p)
	return pv, nil
}

// isNullish reports whether v is undefined or null (or missing).
func isNullish(v goja.Value) bool { return v == nil || goja.IsUndefined(v) || goja.IsNull(v) }

// lengthOf is v.length as an integer (0 for undefined, null and values without one).
func (x *run) lengthOf(v goja.Value) int64 {
	if isNullish(v) {
		return 0
	}
	if s, ok := v.(goja.String); ok {
		return int64(s.Length())
	}
	if l := v.ToObject(x.vm).Get("length"); l != nil {
		return l.ToInteger()
	}
	return 0
}

// indexed is the number of index properties of v when v is a string, an array, a typed
// array or an arguments object (whose keys the built-ins list one by one), and -1 for
// other values.
func (x *run) indexed(v goja.Value) int64 {
	if isNullish(v) {
		return -1
	}
	if s, ok := v.(goja.String); ok {
		return int64(s.Length())
	}
	o, ok := v.(*goja.Object)
	if !ok {
		return -1
	}
	switch o.ClassName() {
	case "Array", "Arguments", "String":
		return o.Get("length").ToInteger()
	}
	if _, ok := typedArray(o); ok {
		return o.Get("length").ToInteger()
	}
	return -1
}

// typedArray reports whether o is a typed array, and the bytes of its element.
func typedArray(o *goja.Object) (int64, bool) {
	t := o.ExportType()
	if o.ClassName() == "Object" && t != nil && t.Kind() == reflect.Slice {
		return int64(t.Elem().Size()), true
	}
	return 0, false
}

// keyCount is the number of own keys v would list: its index properties when it has them,
// else the count of its enumerable string keys.
func (x *run) keyCount(v goja.Value) int64 {
	if n := x.indexed(v); n >= 0 {
		return n
	}
	if o, ok := v.(*goja.Object); ok {
		return int64(len(o.Keys()))
	}
	return 0
}

func (x *run) guardArrays() error {
	vm := x.vm
	maxEl := x.maxElements()
	arrayProto := x.proto("Array")
	tooLong := func(what string, n int64) {
		x.fail(x.memoryError(what + " on an array of length " + strconv.FormatInt(n, 10) + " (at most " + strconv.FormatInt(maxEl, 10) + " elements)"))
		panic(x.vm.NewGoError(x.reason.Load()))
	}
	// What the methods build: join and toLocaleString the sum of their strings; concat and flat
	// the sum of the arrays they flatten; flatMap what its callback returns.
	if err := x.wrap(arrayProto, "join", func(orig goja.Callable, fc goja.FunctionCall) goja.Value {
		return x.join(orig, fc, "Array.prototype.join")
	}); err != nil {
		return err
	}
	if err := x.wrap(arrayProto, "toLocaleString", x.toLocaleString); err != nil {
		return err
	}
	if err := x.wrap(arrayProto, "concat", func(orig goja.Callable, fc goja.FunctionCall) goja.Value {
		n := x.spreadLength(fc.This)
		for _, a := range fc.Arguments {
			n += x.spreadLength(a)
		}
		if n > maxEl {
			tooLong("Array.prototype.concat", n)
		}
		x.allow("Array.prototype.concat of "+strconv.FormatInt(n, 10)+" elements", n*bytesPerElement)
		return x.invoke(orig, fc.This, fc.Arguments...)
	}); err != nil {
		return err
	}
	isArray, _ := goja.AssertFunction(x.global("Array").Get("isArray"))
	if err := x.wrap(arrayProto, "flat", func(orig goja.Callable, fc goja.FunctionCall) goja.Value {
		depth := int64(1)
		if d := fc.Argument(0); !goja.IsUndefined(d) {
			if f := d.ToFloat(); f != f || f < 0 {
				depth = 0
			} else if f > 1<<30 {
				depth = 1 << 30
			} else {
				depth = int64(f)
			}
		}
		// Count what flattening would visit; a cyclic array flattened without a depth
		// visits itself for ever (and the built-in recurses until the Go stack overflows).
		visited := int64(0)
		var count func(v goja.Value, depth int64)
		count = func(v goja.Value, depth int64) {
			o := v.ToObject(vm)
			n := x.lengthOf(o)
			visited += n
			if visited > maxEl {
				tooLong("Array.prototype.flat", visited)
			}
			if depth == 0 {
				return
			}
			for i := range n {
				e := o.Get(strconv.FormatInt(i, 10))
				if e == nil {
					continue
				}
				if ok := x.invoke(isArray, goja.Undefined(), e); ok.ToBoolean() {
					count(e, depth-1)
				}
			}
		}
		count(fc.This, depth)
		x.allow("Array.prototype.flat of "+strconv.FormatInt(visited, 10)+" elements", visited*bytesPerElement)
		return x.invoke(orig, fc.This, fc.Arguments...)
	}); err != nil {
		return err
	}
	if err := x.wrap(arrayProto, "flatMap", func(orig goja.Callable, fc goja.FunctionCall) goja.Value {
		cb, ok := goja.AssertFunction(fc.Argument(0))
		if !ok {
			return x.invoke(orig, fc.This, fc.Arguments...)
		}
		metered := vm.ToValue(func(c goja.FunctionCall) goja.Value {
			v := x.invoke(cb, c.This, c.Arguments...)
			if ok := x.invoke(isArray, goja.Undefined(), v); ok.ToBoolean() {
				n := x.lengthOf(v)
				if n > maxEl {
					tooLong("Array.prototype.flatMap", n)
				}
				x.allow("Array.prototype.flatMap of "+strconv.FormatInt(n, 10)+" elements", n*bytesPerElement)
			}
			return v
		})
		return x.invoke(orig, fc.This, append([]goja.Value{metered}, fc.Arguments[1:]...)...)
	}); err != nil {
		return err
	}

	// Every method (the ones above included, which it wraps again) refuses arrays longer
	// than maxElements before anything else.
	for _, k := range append([]string{}, arrayProto.GetOwnPropertyNames()...) {
		if k == "constructor" {
			continue
		}
		name := "Array.prototype." + k
		if err := x.check(arrayProto, k, func(this goja.Value, _ []goja.Value) {
			if n := x.lengthOf(this); n > maxEl {
				tooLong(name, n)
			}
		}); err != nil {
			return err
		}
	}
	if err := x.wrapSymbol(arrayProto, goja.SymIterator, func(orig goja.Callable, fc goja.FunctionCall) goja.Value {
		if n := x.lengthOf(fc.This); n > maxEl {
			tooLong("iterating", n)
		}
		return x.invoke(orig, fc.This)
	}); err != nil {
		return err
	}
	// Array.from of an array-like, and the Array constructor.
	if err := x.check(x.global("Array"), "from", func(_ goja.Value, args []goja.Value) {
		if len(args) > 0 {
			if n := x.lengthOf(args[0]); n > maxEl {
				tooLong("Array.from", n)
			}
		}
	}); err != nil {
		return err
	}
	return x.guardConstructor("Array", func(args []goja.Value) {
		if len(args) == 1 {
			if n := args[0].ToFloat(); n > float64(maxEl) {
				tooLong("Array", int64(n))
			}
		}
	})
}

// spreadLength is the number of elements concat takes from v: an array's (or a spreadable
// object's) length, else 1.
func (x *run) spreadLength(v goja.Value) int64 {
	o, ok := v.(*goja.Object)
	if !ok {
		return 1
	}
	if s := o.GetSymbol(goja.SymIsConcatSpreadable); s != nil && !goja.IsUndefined(s) {
		if s.ToBoolean() {
			return x.lengthOf(o)
		}
		return 1
	}
	if o.ClassName() == "Array" {
		return x.lengthOf(o)
	}
	return 1
}

// join is Array.prototype.join (and, through it, toString and String(array)): it measures
// the strings of the elements before the original builds them into one. An element that
// is an object is converted here, once, and the original joins the converted copy, so
// each element's toString runs once as the language says.
func (x *run) join(orig goja.Callable, fc goja.FunctionCall, what string) goja.Value {
	vm := x.vm
	this := fc.This
	if isNullish(this) {
		return x.invoke(orig, this, fc.Arguments...)
	}
	o := this.ToObject(vm)
	n := x.lengthOf(o)
	sep := int64(1)
	args := fc.Arguments
	if s := fc.Argument(0); !goja.IsUndefined(s) {
		str, l := x.stringArg(s)
		sep = l
		args = []goja.Value{str}
	}
	total := int64(0)
	if n > 1 {
		total = (n - 1) * sep
	}
	var converted []goja.Value          // the elements, when one of them had to be converted
	strings := &meter{x: x, what: what} // the strings converted here
	for i := range n {
		e := o.Get(strconv.FormatInt(i, 10))
		if obj, ok := e.(*goja.Object); ok {
			if converted == nil {
				converted = make([]goja.Value, i, n)
				for j := range i {
					converted[j] = o.Get(strconv.FormatInt(j, 10))
				}
			}
			e = obj.ToString()
			strings.add(valueChars(e) * bytesPerChar)
		}
		total += valueChars(e)
		if converted != nil {
			converted = append(converted, e)
		}
		if total*bytesPerChar > x.l.MaxMemoryBytes {
			break // refused below, without reading the rest
		}
	}
	x.allow(what+" of "+strconv.FormatInt(n, 10)+" elements ("+strconv.FormatInt(total, 10)+" characters)", total*bytesPerChar)
	if converted != nil {
		return x.invoke(orig, vm.NewArray(toAny(converted)...), args...)
	}
	return x.invoke(orig, this, args...)
}

// valueChars is the most characters the string of a primitive value has.
func valueChars(v goja.Value) int64 {
	switch {
	case isNullish(v):
		return 0
	case goja.IsString(v):
		return int64(v.(goja.String).Length())
	case goja.IsNumber(v):
		f := v.ToFloat()
		if f == math.Trunc(f) && math.Abs(f) < 1e15 {
			return int64(len(strconv.FormatInt(int64(f), 10)))
		}
		return 24 // the longest: -1.7976931348623157e+308
	}
	return 5 // true, false, symbols (which the join refuses)
}

func toAny(vs []goja.Value) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

// toLocaleString is Array.prototype.toLocaleString: each element's toLocaleString, joined
// with ","; it calls them here, measures the strings and joins those.
func (x *run) toLocaleString(_ goja.Callable, fc goja.FunctionCall) goja.Value {
	vm := x.vm
	o := vm.ToValue(fc.This).ToObject(vm)
	n := x.lengthOf(o)
	parts := make([]any, 0, min(n, 1024))
	total := n
	for i := range n {
		e := o.Get(strconv.FormatInt(i, 10))
		if isNullish(e) {
			parts = append(parts, "")
			continue
		}
		f, ok := goja.AssertFunction(e.ToObject(vm).Get("toLocaleString"))
		if !ok {
			panic(vm.NewTypeError("toLocaleString is not a function"))
		}
		s := x.invoke(f, e).ToString()
		total += valueChars(s)
		x.allow("Array.prototype.toLocaleString", total*bytesPerChar)
		parts = append(parts, s)
	}
	join, _ := goja.AssertFunction(x.proto("Array").Get("join"))
	return x.invoke(join, vm.NewArray(parts...), vm.ToValue(","))
}

func (x *run) guardObjects() error {
	object := x.global("Object")
	perKey := func(name string, bytes int64, count func(goja.Value) int64) error {
		return x.check(object, name, func(_ goja.Value, args []goja.Value) {
			if len(args) > 0 {
				n := count(args[0])
				x.allow("Object."+name+" of "+strconv.FormatInt(n, 10)+" keys", n*bytes)
			}
		})
	}
	// Keys of strings, arrays and typed arrays are one per index; a plain object's keys
	// cost less than the object itself, its entries and descriptors more.
	for _, k := range []string{"keys", "values", "getOwnPropertyNames"} {
		if err := perKey(k, bytesPerKey, x.indexed); err != nil {
			return err
		}
	}
	for _, k := range []string{"entries", "getOwnPropertyDescriptors"} {
		if err := perKey(k, bytesPerEntry, x.keyCount); err != nil {
			return err
		}
	}
	if err := x.check(object, "assign", func(_ goja.Value, args []goja.Value) {
		n := int64(0)
		for _, a := range args[min(1, len(args)):] {
			n += max(x.indexed(a), 0)
		}
		x.allow("Object.assign of "+strconv.FormatInt(n, 10)+" properties", n*bytesPerProperty)
	}); err != nil {
		return err
	}
	return x.check(x.global("Reflect"), "ownKeys", func(_ goja.Value, args []goja.Value) {
		if len(args) > 0 {
			n := x.indexed(args[0])
			x.allow("Reflect.ownKeys of "+strconv.FormatInt(n, 10)+" keys", n*bytesPerKey)
		}
	})
}

var arrayBufferType = reflect.TypeOf(goja.ArrayBuffer{})

// typedArrayLength is the elements a typed array constructor (or from) would make of arg.
func (x *run) typedArrayLength(arg goja.Value) int64 {
	if isNullish(arg) {
		return 0
	}
	if o, ok := arg.(*goja.Object); ok {
		if o.ExportType() == arrayBufferType {
			return 0 // a view: no new memory
		}
		return x.lengthOf(o) // an array-like: one element each (iterables are checkpointed)
	}
	return arg.ToInteger()
}

func (x *run) guardTypedArrays() error {
	// %TypedArray% (from, of) and %TypedArray%.prototype, shared by every typed array.
	ta := x.global("Uint8Array").Prototype()
	for _, t := range []struct {
		name string
		size int64
	}{
		{"ArrayBuffer", 1}, {"SharedArrayBuffer", 1}, {"Int8Array", 1}, {"Uint8Array", 1}, {"Uint8ClampedArray", 1},
		{"Int16Array", 2}, {"Uint16Array", 2}, {"Int32Array", 4}, {"Uint32Array", 4}, {"Float32Array", 4}, {"Float64Array", 8},
	} {
		name, size := t.name, t.size
		if err := x.guardConstructor(name, func(args []goja.Value) {
			if len(args) > 0 {
				n := x.typedArrayLength(args[0])
				x.allow("new "+name+"("+strconv.FormatInt(n, 10)+")", n*size)
			}
		}); err != nil {
			return err
		}
	}
	if ta == nil {
		return nil
	}
	if err := x.check(ta, "from", func(this goja.Value, args []goja.Value) {
		if len(args) > 0 {
			n := x.typedArrayLength(args[0])
			x.allow("TypedArray.from of "+strconv.FormatInt(n, 10)+" elements", n*8)
		}
	}); err != nil {
		return err
	}
	taProto := ta.Get("prototype").ToObject(x.vm)
	// Copies: at most the array's own size.
	for _, k := range []string{"slice", "map", "filter", "toSorted", "toReversed", "with"} {
		name := "TypedArray.prototype." + k
		if err := x.check(taProto, k, func(this goja.Value, _ []goja.Value) {
			if o, ok := this.(*goja.Object); ok {
				if el, ok := typedArray(o); ok {
					x.allow(name, x.lengthOf(o)*el)
				}
			}
		}); err != nil {
			return err
		}
	}
	// Text: every element as a number, up to 24 characters, and the separators.
	for _, k := range []string{"join", "toLocaleString"} {
		name := "TypedArray.prototype." + k
		if err := x.check(taProto, k, func(this goja.Value, args []goja.Value) {
			sep := int64(1)
			if k == "join" && len(args) > 0 && !goja.IsUndefined(args[0]) {
				sep = valueChars(args[0].ToString())
			}
			n := x.lengthOf(this)
			x.allow(name+" of "+strconv.FormatInt(n, 10)+" elements", n*(24+sep)*bytesPerChar)
		}); err != nil {
			return err
		}
	}
	return x.check(x.proto("ArrayBuffer"), "slice", func(this goja.Value, _ []goja.Value) {
		if o, ok := this.(*goja.Object); ok {
			x.allow("ArrayBuffer.prototype.slice", o.Get("byteLength").ToInteger())
		}
	})
}

func (x *run) guardFunctions() error {
	vm := x.vm
	maxEl := x.maxElements()
	// apply and construct make an argument list of an array-like's length.
	argList := func(what string, v goja.Value) {
		if isNullish(v) {
			return
		}
		n := x.lengthOf(v)
		if n > maxEl {
			x.fail(x.memoryError(what + " with " + strconv.FormatInt(n, 10) + " arguments (at most " + strconv.FormatInt(maxEl, 10) + ")"))
			panic(vm.NewGoError(x.reason.Load()))
		}
		x.allow(what+" with "+strconv.FormatInt(n, 10)+" arguments", n*bytesPerElement)
	}
	if err := x.check(x.proto("Function"), "apply", func(_ goja.Value, args []goja.Value) {
		if len(args) > 1 {
			argList("Function.prototype.apply", args[1])
		}
	}); err != nil {
		return err
	}
	reflectObj := x.global("Reflect")
	for _, k := range []string{"apply", "construct"} {
		name := "Reflect." + k
		idx := map[string]int{"apply": 2, "construct": 1}[k]
		if err := x.check(reflectObj, k, func(_ goja.Value, args []goja.Value) {
			if len(args) > idx {
				argList(name, args[idx])
			}
		}); err != nil {
			return err
		}
	}

	// Code compiled at run time: compiled as a program is (compileRunTime), so its size
	// counts, what compile refuses is refused, and its concatenations ask the budget.
	if err := x.wrap(vm.GlobalObject(), "eval", func(orig goja.Callable, fc goja.FunctionCall) goja.Value {
		if src, ok := fc.Argument(0).(goja.String); ok {
			if prg := x.compileRunTime("eval", src.String()); prg != nil {
				return x.runCompiled(prg)
			}
		}
		return x.invoke(orig, goja.Undefined(), fc.Arguments...)
	}); err != nil {
		return err
	}
	// Function and its async and generator kin (goja has no async generators), reached as
	// the constructor of a function.
	kinds, err := vm.RunProgram(functionKinds)
	if err != nil {
		return err
	}
	ctors := kinds.ToObject(vm)
	for i, kind := range []struct{ name, keyword string }{{"Function", "function"}, {"AsyncFunction", "async function"}, {"GeneratorFunction", "function*"}} {
		c, ok := ctors.Get(strconv.Itoa(i)).(*goja.Object)
		if !ok {
			continue
		}
		p, err := x.guardedConstructor(c, func(args []goja.Value) *goja.Object {
			src := "(" + kind.keyword + " anonymous("
			for i, a := range args {
				if i == len(args)-1 {
					src += "\n) {\n" + a.String() + "\n})"
					break
				}
				if i > 0 {
					src += ","
				}
				src += a.String()
			}
			if len(args) == 0 {
				src += "\n) {\n\n})"
			}
			prg := x.compileRunTime(kind.name, src)
			if prg == nil {
				return nil
			}
			f, _ := x.runCompiled(prg).(*goja.Object)
			return f
		})
		if err != nil {
			return err
		}
		proto := c.Get("prototype").ToObject(vm)
		if err := proto.DefineDataProperty("constructor", p, goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
			return err
		}
		if kind.name == "Function" {
			if err := vm.GlobalObject().DefineDataProperty("Function", p, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
				return err
			}
		}
	}
	return nil
}

// functionKinds lists the constructors of the kinds of function.
var functionKinds = goja.MustCompile("kinds.js", `[Function, Object.getPrototypeOf(async function () {}).constructor,
	Object.getPrototypeOf(function* () {}).constructor]`, true)

// iteratorProtos lists the prototypes of the built-in iterators.
var iteratorProtos = goja.MustCompile("iterators.js", `[[][Symbol.iterator](), ""[Symbol.iterator](), new Map()[Symbol.iterator](),
	new Set()[Symbol.iterator](), /x/g[Symbol.matchAll]("")].map(Object.getPrototypeOf)`, true)

// guardIterators puts a checkpoint in the next of every built-in iterator: spreading,
// Array.from, new Set/Map, Promise.all and the like drain an iterator in a Go loop, which
// the interrupt would not stop.
func (x *run) guardIterators() error {
	protos, err := x.vm.RunProgram(iteratorProtos)
	if err != nil {
		return err
	}
	list := protos.ToObject(x.vm)
	for i := range x.lengthOf(list) {
		p := list.Get(strconv.FormatInt(i, 10)).ToObject(x.vm)
		if err := x.wrap(p, "next", func(orig goja.Callable, fc goja.FunctionCall) goja.Value {
			x.checkpoint()
			return x.invoke(orig, fc.This)
		}); err != nil {
			return err
		}
	}
	return nil
}
