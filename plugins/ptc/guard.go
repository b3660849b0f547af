package ptc

import (
	"runtime"
	"runtime/metrics"
	"strconv"
	"time"

	"github.com/dop251/goja"
)

// The interpreter has no heap cap, and its built-in functions (Array.prototype.fill, join,
// spreading, …) are Go loops that an interrupt does not stop. The run bounds memory in two
// ways:
//
//   - guards refuse, before they start, the built-in calls whose size the program chooses:
//     arrays longer than maxElements (the Array constructor, every Array.prototype method
//     on a longer array or array-like, Array.from), buffers and typed arrays larger than
//     MaxMemoryBytes, and strings from repeat/padStart/padEnd longer than MaxMemoryBytes/2
//     characters;
//   - a watcher samples the process's heap every memoryTick while the run lasts and stops
//     the run once it has grown by more than MaxMemoryBytes since the run began (after one
//     forced collection, so garbage does not count).

// memoryTick is how often the watcher samples the heap.
const memoryTick = 5 * time.Millisecond

// bytesPerElement is what one array element costs, roughly (a value plus slack).
const bytesPerElement = 64

// maxElements is the longest array the built-ins may work on.
func (x *run) maxElements() int64 { return x.l.MaxMemoryBytes / bytesPerElement }

const heapMetric = "/memory/classes/heap/objects:bytes"

// heapBytes reads the bytes of live and not yet collected heap objects.
func heapBytes(s []metrics.Sample) int64 {
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// watchMemory starts the heap watcher; the returned function stops it and waits for it.
func (x *run) watchMemory() (stop func()) {
	s := []metrics.Sample{{Name: heapMetric}}
	base := heapBytes(s)
	quit, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(memoryTick)
		defer t.Stop()
		lastGC := time.Time{}
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			grown := heapBytes(s) - base
			if grown > x.heapGrowth.Load() {
				x.heapGrowth.Store(grown)
			}
			if grown <= x.l.MaxMemoryBytes {
				continue
			}
			if time.Since(lastGC) > 100*time.Millisecond {
				runtime.GC() // garbage does not count: measure again after a collection
				lastGC = time.Now()
				if grown = heapBytes(s) - base; grown <= x.l.MaxMemoryBytes {
					continue
				}
			}
			x.fail(x.memoryError("the program's memory grew by more than " + strconv.FormatInt(x.l.MaxMemoryBytes>>20, 10) + " MiB"))
		}
	}()
	return func() {
		close(quit)
		<-finished
	}
}

func (x *run) memoryError(what string) *Error {
	return &Error{Kind: KindMemory, Msg: what + " (memory limit " + strconv.FormatInt(x.l.MaxMemoryBytes, 10) + " bytes); work on smaller pieces"}
}

// refuse stops the run with a memory error for a built-in call that asked for too much.
func (x *run) refuse(call string, n int64, unit string) goja.Value {
	x.fail(x.memoryError(call + " asked for " + strconv.FormatInt(n, 10) + " " + unit))
	panic(x.vm.NewGoError(x.reason.Load()))
}

// guard installs the allocation guards (see the comment at the top of this file).
func (x *run) guard() error {
	vm := x.vm
	maxEl := x.maxElements()
	lengthOf := func(v goja.Value) int64 {
		if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
			return 0
		}
		o := v.ToObject(vm)
		if l := o.Get("length"); l != nil {
			return l.ToInteger()
		}
		return 0
	}

	// Array.prototype methods and Array.from.
	arrayProto := vm.Get("Array").ToObject(vm).Get("prototype").ToObject(vm)
	keys := append([]string{}, arrayProto.GetOwnPropertyNames()...)
	for _, k := range keys {
		if k == "constructor" {
			continue
		}
		name := "Array.prototype." + k
		if err := x.wrapMethod(arrayProto, k, func(this goja.Value, _ []goja.Value) {
			if n := lengthOf(this); n > maxEl {
				x.refuse(name+" on an array of length "+strconv.FormatInt(n, 10), n, "elements")
			}
		}); err != nil {
			return err
		}
	}
	iter := goja.Value(arrayProto.GetSymbol(goja.SymIterator))
	if f, ok := goja.AssertFunction(iter); ok {
		wrapped := vm.ToValue(func(fc goja.FunctionCall) goja.Value {
			if n := lengthOf(fc.This); n > maxEl {
				x.refuse("iterating an array of length "+strconv.FormatInt(n, 10), n, "elements")
			}
			v, err := f(fc.This, fc.Arguments...)
			if err != nil {
				panic(err)
			}
			return v
		})
		if err := arrayProto.DefineDataPropertySymbol(goja.SymIterator, wrapped, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
			return err
		}
	}
	arrayCtor := vm.Get("Array").ToObject(vm)
	if err := x.wrapMethod(arrayCtor, "from", func(_ goja.Value, args []goja.Value) {
		if len(args) > 0 {
			if n := lengthOf(args[0]); n > maxEl {
				x.refuse("Array.from", n, "elements")
			}
		}
	}); err != nil {
		return err
	}
	if err := x.guardConstructor("Array", func(args []goja.Value) (int64, string) {
		if len(args) == 1 {
			if n := args[0].ToFloat(); n > float64(maxEl) {
				return int64(n), "elements"
			}
		}
		return 0, ""
	}); err != nil {
		return err
	}

	// Buffers and typed arrays.
	for _, t := range []struct {
		name string
		size int64
	}{
		{"ArrayBuffer", 1}, {"SharedArrayBuffer", 1}, {"Int8Array", 1}, {"Uint8Array", 1}, {"Uint8ClampedArray", 1},
		{"Int16Array", 2}, {"Uint16Array", 2}, {"Int32Array", 4}, {"Uint32Array", 4}, {"Float32Array", 4},
		{"Float64Array", 8}, {"BigInt64Array", 8}, {"BigUint64Array", 8},
	} {
		size := t.size
		if err := x.guardConstructor(t.name, func(args []goja.Value) (int64, string) {
			if len(args) == 0 {
				return 0, ""
			}
			n := int64(0)
			if _, isObj := args[0].(*goja.Object); isObj {
				n = lengthOf(args[0]) // from an array-like: one element each
			} else {
				n = args[0].ToInteger()
			}
			if n*size > x.l.MaxMemoryBytes {
				return n * size, "bytes"
			}
			return 0, ""
		}); err != nil {
			return err
		}
	}

	// Strings whose length the program chooses.
	strProto := vm.Get("String").ToObject(vm).Get("prototype").ToObject(vm)
	maxChars := x.l.MaxMemoryBytes / 2
	strLen := func(this goja.Value) int64 { return int64(len(this.String())) }
	if err := x.wrapMethod(strProto, "repeat", func(this goja.Value, args []goja.Value) {
		if len(args) > 0 {
			if n := strLen(this) * args[0].ToInteger(); n > maxChars {
				x.refuse("String.prototype.repeat", n, "characters")
			}
		}
	}); err != nil {
		return err
	}
	for _, k := range []string{"padStart", "padEnd"} {
		name := "String.prototype." + k
		if err := x.wrapMethod(strProto, k, func(_ goja.Value, args []goja.Value) {
			if len(args) > 0 {
				if n := args[0].ToInteger(); n > maxChars {
					x.refuse(name, n, "characters")
				}
			}
		}); err != nil {
			return err
		}
	}
	return nil
}

// wrapMethod replaces o[name] (a function) with one that runs check before it.
func (x *run) wrapMethod(o *goja.Object, name string, check func(this goja.Value, args []goja.Value)) error {
	f, ok := goja.AssertFunction(o.Get(name))
	if !ok {
		return nil
	}
	wrapped := x.vm.ToValue(func(fc goja.FunctionCall) goja.Value {
		check(fc.This, fc.Arguments)
		v, err := f(fc.This, fc.Arguments...)
		if err != nil {
			panic(err)
		}
		return v
	})
	return o.DefineDataProperty(name, wrapped, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// guardConstructor replaces the global constructor name with a proxy that refuses calls
// whose size (as check computes it) is too large. The proxy keeps the prototype, so
// instanceof and subclassing behave as before.
func (x *run) guardConstructor(name string, check func(args []goja.Value) (int64, string)) error {
	vm := x.vm
	target := vm.Get(name)
	if target == nil || goja.IsUndefined(target) {
		return nil
	}
	obj := target.ToObject(vm)
	call, _ := goja.AssertFunction(obj)
	ctor, _ := goja.AssertConstructor(obj)
	p := vm.NewProxy(obj, &goja.ProxyTrapConfig{
		Apply: func(_ *goja.Object, this goja.Value, args []goja.Value) goja.Value {
			if n, unit := check(args); n > 0 {
				x.refuse(name, n, unit)
			}
			v, err := call(this, args...)
			if err != nil {
				panic(err)
			}
			return v
		},
		Construct: func(_ *goja.Object, args []goja.Value, newTarget *goja.Object) *goja.Object {
			if n, unit := check(args); n > 0 {
				x.refuse("new "+name, n, unit)
			}
			o, err := ctor(newTarget, args...)
			if err != nil {
				panic(err)
			}
			return o
		},
	})
	return vm.GlobalObject().DefineDataProperty(name, vm.ToValue(p), goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
}
