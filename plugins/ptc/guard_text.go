package ptc

import (
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
)

// The guards of the string, regular expression and JSON built-ins (see guard.go).

const (
	// bytesPerMatch is one match's positions, which the regular expression built-ins
	// collect for every match before they build anything, and the engine's garbage (plus
	// bytesPerGroup a group).
	bytesPerMatch = 96
	bytesPerGroup = 16
	// bytesPerSearchChar is what a global search costs per character of its subject before
	// the first match: the engines' rune copy and the match list they reserve.
	bytesPerSearchChar = 28
	// bytesPerPatternChar is one character of a regular expression's source, compiled.
	bytesPerPatternChar = 200
	// jsonBytesPerContainer, jsonBytesPerMember and jsonBytesPerItem are what JSON.parse
	// builds for an object or array, a property and a comma-separated item.
	jsonBytesPerContainer = 256
	jsonBytesPerMember    = 256
	jsonBytesPerItem      = 32
)

// stringArg converts v to a primitive string the way the built-ins do (so a program's
// toString runs once, here) and returns it with its length.
func (x *run) stringArg(v goja.Value) (goja.String, int64) {
	s, ok := v.(goja.String)
	if !ok {
		if v == nil {
			v = goja.Undefined()
		}
		p := v.ToString() // an object's toString runs here; a number's string is made lazily
		if s, ok = p.(goja.String); !ok {
			s = x.vm.ToValue(p.String()).(goja.String)
		}
	}
	return s, int64(s.Length())
}

// meter counts what a built-in builds bit by bit (a replacement per match, a JSON value at
// a time) into one buffer. Such a buffer doubles when it fills up, so each time the total
// has grown by a sixteenth (and at least smallAlloc) the meter asks the budget for as much
// again as the total: the next doubling must fit.
type meter struct {
	x    *run
	what string
	used int64
	next int64 // the total at which to ask again (0: smallAlloc; smaller totals are the watcher's)
}

func (m *meter) add(bytes int64) {
	m.used += bytes
	if m.used >= max(m.next, smallAlloc) {
		m.x.allowNow(m.what, m.used)
		m.next = m.used + max(smallAlloc, m.used/16)
	}
	m.x.checkpoint()
}

// allowNow is allow for what is being built: it asks the budget whatever the size.
func (x *run) allowNow(what string, bytes int64) {
	if bytes <= smallAlloc {
		bytes = smallAlloc + 1
	}
	x.allow(what, bytes)
}

// fits reports whether bytes more fit in the run's memory limit (after a collection, if
// one may help), without refusing.
func (x *run) fits(bytes int64) bool { return x.exceeds("", bytes) == nil }

func (x *run) guardStrings() error {
	sp := x.proto("String")
	// this as a string, converted once (nil: null or undefined, which the original refuses).
	this := func(fc goja.FunctionCall) (goja.String, int64) {
		if isNullish(fc.This) {
			return nil, 0
		}
		return x.stringArg(fc.This)
	}
	if err := x.wrap(sp, "repeat", func(orig goja.Callable, fc goja.FunctionCall) goja.Value {
		s, n := this(fc)
		if s == nil {
			return x.invoke(orig, fc.This, fc.Arguments...)
		}
		count := fc.Argument(0).ToNumber()
		if c := count.ToFloat(); c >= 0 && c < 1e300 {
			x.allow("String.prototype.repeat of "+strconv.FormatInt(n, 10)+" characters "+strconv.FormatFloat(c, 'f', -1, 64)+" times", int64(float64(n)*c*bytesPerChar))
		}
		return x.invoke(orig, s, count)
	}); err != nil {
		return err
	}
	for _, k := range []string{"padStart", "padEnd"} {
		name := "String.prototype." + k
		if err := x.wrap(sp, k, func(orig goja.Callable, fc goja.FunctionCall) goja.Value {
			s, _ := this(fc)
			if s == nil {
				return x.invoke(orig, fc.This, fc.Arguments...)
			}
			target := fc.Argument(0).ToNumber()
			if t := target.ToFloat(); t > 0 {
				x.allow(name+" to "+strconv.FormatFloat(t, 'f', -1, 64)+" characters", int64(min(t, 1e15)*bytesPerChar))
			}
			return x.invoke(orig, s, append([]goja.Value{target}, fc.Arguments[min(1, len(fc.Arguments)):]...)...)
		}); err != nil {
			return err
		}
	}
	if err := x.wrap(sp, "concat", func(orig goja.Callable, fc goja.FunctionCall) goja.Value {
		s, n := this(fc)
		if s == nil {
			return x.invoke(orig, fc.This, fc.Arguments...)
		}
		args := make([]goja.Value, len(fc.Arguments))
		for i, a := range fc.Arguments {
			str, l := x.stringArg(a)
			args[i], n = str, n+l
		}
		x.allow("String.prototype.concat of "+strconv.FormatInt(n, 10)+" characters", n*bytesPerChar)
		return x.invoke(orig, s, args...)
	}); err != nil {
		return err
	}
	// Case mapping and normalization: at most 3 (NFC, case), 4 (NFD) or 18 (NFKC, NFKD)
	// units for one.
	for k, factor := range map[string]int64{"toUpperCase": 3, "toLowerCase": 3, "toLocaleUpperCase": 3, "toLocaleLowerCase": 3, "normalize": 18} {
		name := "String.prototype." + k
		if err := x.wrap(sp, k, func(orig goja.Callable, fc goja.FunctionCall) goja.Value {
			s, n := this(fc)
			if s == nil {
				return x.invoke(orig, fc.This, fc.Arguments...)
			}
			f := factor
			if k == "normalize" {
				switch form := fc.Argument(0); {
				case goja.IsUndefined(form), form.String() == "NFC":
					f = 3
				case form.String() == "NFD":
					f = 4
				}
			}
			x.allow(name+" of "+strconv.FormatInt(n, 10)+" characters", n*f*bytesPerChar)
			return x.invoke(orig, s, fc.Arguments...)
		}); err != nil {
			return err
		}
	}
	// Escaping: at most 9 (encodeURI, encodeURIComponent) or 6 (escape) characters for one.
	g := x.vm.GlobalObject()
	for k, factor := range map[string]int64{"encodeURI": 9, "encodeURIComponent": 9, "escape": 6} {
		if err := x.wrap(g, k, func(orig goja.Callable, fc goja.FunctionCall) goja.Value {
			s, n := x.stringArg(fc.Argument(0))
			x.allow(k+" of "+strconv.FormatInt(n, 10)+" characters", n*factor*bytesPerChar)
			return x.invoke(orig, goja.Undefined(), s)
		}); err != nil {
			return err
		}
	}
	// String.raw joins the raw strings of a template with the substitutions: converted
	// here, once, and measured.
	if err := x.wrap(x.global("String"), "raw", func(orig goja.Callable, fc goja.FunctionCall) goja.Value {
		if isNullish(fc.Argument(0)) {
			return x.invoke(orig, fc.This, fc.Arguments...)
		}
		raw := fc.Argument(0).ToObject(x.vm).Get("raw")
		if isNullish(raw) {
			return x.invoke(orig, fc.This, fc.Arguments...)
		}
		ro := raw.ToObject(x.vm)
		n := x.lengthOf(ro)
		m := &meter{x: x, what: "String.raw"}
		parts := make([]any, 0, min(n, 1024))
		for i := range n {
			if n > x.maxElements() {
				x.allow("String.raw of "+strconv.FormatInt(n, 10)+" strings", n*bytesPerElement)
			}
			s, l := x.stringArg(ro.Get(strconv.FormatInt(i, 10)))
			m.add(l * bytesPerChar)
			parts = append(parts, s)
		}
		subs := make([]goja.Value, 0, len(fc.Arguments))
		for i, a := range fc.Arguments[1:] {
			if int64(i+1) >= n {
				break
			}
			s, l := x.stringArg(a)
			m.add(l * bytesPerChar)
			subs = append(subs, s)
		}
		template := x.vm.NewObject()
		if err := template.Set("raw", x.vm.NewArray(parts...)); err != nil {
			panic(err)
		}
		return x.invoke(orig, fc.This, append([]goja.Value{template}, subs...)...)
	}); err != nil {
		return err
	}
	// A string pattern compiled as a regular expression.
	for _, k := range []string{"match", "matchAll", "search"} {
		name := "String.prototype." + k
		if err := x.check(sp, k, func(_ goja.Value, args []goja.Value) {
			if len(args) > 0 {
				if s, ok := args[0].(goja.String); ok {
					x.allow(name+" with a pattern of "+strconv.Itoa(s.Length())+" characters", int64(s.Length())*bytesPerPatternChar)
				}
			}
		}); err != nil {
			return err
		}
	}
	// split, replace and replaceAll with a string pattern; a regular expression hands them
	// to its own methods (guardRegExps).
	delegated := func(v goja.Value, sym *goja.Symbol) bool {
		o, ok := v.(*goja.Object)
		if !ok {
			return false
		}
		m := o.GetSymbol(sym)
		return !isNullish(m)
	}
	if err := x.wrap(sp, "split", func(orig goja.Callable, fc goja.FunctionCall) goja.Value {
		if delegated(fc.Argument(0), goja.SymSplit) || isNullish(fc.This) || goja.IsUndefined(fc.Argument(0)) {
			return x.invoke(orig, fc.This, fc.Arguments...)
		}
		s, n := this(fc)
		sep, sl := x.stringArg(fc.Argument(0))
		limit := fc.Argument(1)
		lim := int64(1) << 32
		if !goja.IsUndefined(limit) {
			limit = limit.ToNumber()
			lim = int64(uint32(limit.ToInteger()))
		}
		pieces := min(lim, n+1)
		if sl > 0 {
			pieces = min(pieces, n/sl+1)
		}
		cost := func(k int64) int64 { return min(lim, k+1)*bytesPerPiece + n*bytesPerChar }
		if sl > 0 && !x.fits(cost(pieces)) {
			pieces = x.countOccurrences(s, sep, cost, "String.prototype.split")
		}
		x.allow("String.prototype.split into "+strconv.FormatInt(pieces, 10)+" pieces", cost(pieces))
		return x.invoke(orig, s, sep, limit)
	}); err != nil {
		return err
	}
	for _, all := range []bool{false, true} {
		k := map[bool]string{false: "replace", true: "replaceAll"}[all]
		name := "String.prototype." + k
		if err := x.wrap(sp, k, func(orig goja.Callable, fc goja.FunctionCall) goja.Value {
			if delegated(fc.Argument(0), goja.SymReplace) || isNullish(fc.This) {
				return x.invoke(orig, fc.This, fc.Arguments...)
			}
			s, n := this(fc)
			pat, pl := x.stringArg(fc.Argument(0))
			matches := int64(1)
			if all {
				matches = n/max(pl, 1) + 1
				if !x.fits(matches * bytesPerMatch) {
					matches = x.countOccurrences(s, pat, func(k int64) int64 { return k * bytesPerMatch }, name)
				}
				x.allow(name+" of "+strconv.FormatInt(matches, 10)+" matches", matches*bytesPerMatch)
			}
			return x.invoke(orig, s, pat, x.replacement(name, fc.Argument(1), n, matches))
		}); err != nil {
			return err
		}
	}
	return nil
}

// countOccurrences counts the occurrences of sep in s, refusing (for what) as soon as
// cost(count) no longer fits.
func (x *run) countOccurrences(s, sep goja.String, cost func(int64) int64, what string) int64 {
	indexOf, _ := goja.AssertFunction(x.proto("String").Get("indexOf"))
	step := int64(max(sep.Length(), 1))
	k := int64(0)
	for pos := int64(0); ; k++ {
		i := x.invoke(indexOf, s, sep, x.vm.ToValue(pos)).ToInteger()
		if i < 0 {
			return k
		}
		pos = i + step
		if k%4096 == 0 {
			x.allowNow(what+" of "+strconv.FormatInt(k, 10)+"+ matches", cost(k))
		}
	}
}

// replacement returns the replacement to pass to a replace of a subject of n characters
// with at most matches matches: a function is wrapped so that what it returns is metered;
// a string that cannot grow much is passed as it is; any other string becomes a function
// that expands its $ patterns (as goja does) and meters the result.
func (x *run) replacement(what string, r goja.Value, n, matches int64) goja.Value {
	m := &meter{x: x, what: what}
	if f, ok := goja.AssertFunction(r); ok {
		return x.vm.ToValue(func(fc goja.FunctionCall) goja.Value {
			s, l := x.stringArg(x.invoke(f, goja.Undefined(), fc.Arguments...))
			m.add(l * bytesPerChar)
			return s
		})
	}
	rs, rl := x.stringArg(r)
	if !strings.Contains(rs.String(), "$") && x.fits((n+matches*rl)*bytesPerChar) {
		return rs
	}
	return x.vm.ToValue(func(fc goja.FunctionCall) goja.Value {
		s := x.substitute(rs, fc.Arguments)
		m.add(int64(s.Length()) * bytesPerChar)
		return s
	})
}

// substitute expands the $ patterns of r for one match, as goja's own replace does: $$,
// $& (the match), $` and $' (the text before and after it), $n and $nn (a group; a number
// past the groups is kept as text). args are the replacer function's: the match, the
// groups, the position and the subject.
func (x *run) substitute(r goja.String, args []goja.Value) goja.String {
	if len(args) < 3 {
		return r
	}
	subject := args[len(args)-1].(goja.String)
	pos := int(args[len(args)-2].ToInteger())
	captures := args[:len(args)-2]
	matched, _ := captures[0].(goja.String)
	capture := func(i int) goja.String {
		if c, ok := captures[i].(goja.String); ok {
			return c
		}
		return x.vm.ToValue("").(goja.String)
	}
	tail := pos + matched.Length()
	l, rl := subject.Length(), r.Length()
	// The length first, so a huge expansion is refused before it is built.
	var b goja.StringBuilder
	write := func(s goja.String, start, end int, measure bool, total *int64) {
		if measure {
			*total += int64(end - start)
			return
		}
		b.WriteSubstring(s, start, end)
	}
	var total int64
	for _, measure := range []bool{true, false} {
		if !measure {
			x.allowNow("a replacement of "+strconv.FormatInt(total, 10)+" characters", total*bytesPerChar)
		}
		for i := 0; i < rl; i++ {
			c := r.CharAt(i)
			if c != '$' || i == rl-1 {
				write(r, i, i+1, measure, &total)
				continue
			}
			switch ch := r.CharAt(i + 1); ch {
			case '$':
				write(r, i, i+1, measure, &total)
			case '`':
				write(subject, 0, pos, measure, &total)
			case '\'':
				if tail < l {
					write(subject, tail, l, measure, &total)
				}
			case '&':
				write(matched, 0, matched.Length(), measure, &total)
			default:
				num, j := 0, i+1
				for ; j < rl; j++ {
					d := r.CharAt(j)
					if d < '0' || d > '9' {
						break
					}
					next := num*10 + int(d-'0')
					if next >= len(captures) {
						break
					}
					num = next
				}
				if num > 0 {
					cp := capture(num)
					write(cp, 0, cp.Length(), measure, &total)
					i = j - 1
					continue
				}
				write(r, i, i+2, measure, &total)
			}
			i++
		}
	}
	return b.String()
}

func (x *run) guardRegExps() error {
	rp := x.proto("RegExp")
	// info reads the flags, an upper bound of the groups, what a search costs per character
	// of s before its matches (nothing for an ASCII subject and a pattern Go's engine runs;
	// regexp2 and unicode subjects cost bytesPerSearchChar) and the pattern for Go's
	// engine (nil when goja runs it on regexp2).
	info := func(re goja.Value, s goja.String) (global bool, groups, perChar int64, goRe *regexp.Regexp) {
		perChar = bytesPerSearchChar
		o, ok := re.(*goja.Object)
		if !ok {
			return false, 0, perChar, nil
		}
		var flags, src string
		if f := o.Get("flags"); f != nil {
			flags = f.String()
		}
		if v := o.Get("source"); v != nil {
			src = v.String()
		}
		goRe = x.goPattern(src, flags)
		if _, ascii := asciiOf(s); ascii && goRe != nil {
			perChar = 0
		}
		return strings.Contains(flags, "g"), int64(strings.Count(src, "(")), perChar, goRe
	}
	// matches is how many matches to reckon with in s (n characters) for cost: as many as
	// there are positions when that fits, else as many as Go's engine finds (plus one a
	// character outside the BMP in a unicode subject, which is two positions here),
	// stopping once they no longer fit. A pattern only regexp2 runs cannot be counted fast (goja's own search
	// from an offset compares the whole subject each time): one per position.
	matches := func(what string, goRe *regexp.Regexp, s goja.String, n int64, cost func(int64) int64) int64 {
		if x.fits(cost(n+1)) || goRe == nil {
			return n + 1
		}
		text, ascii := asciiOf(s)
		if !ascii {
			x.allow(what+": the subject as UTF-8", n*3)
			text = s.String()
		}
		most := int64(0) // the most matches that fit
		for lo, hi := int64(0), n+1; lo <= hi; {
			mid := (lo + hi) / 2
			if x.fits(cost(mid)) {
				most, lo = mid, mid+1
			} else {
				hi = mid - 1
			}
		}
		k := int64(len(goRe.FindAllStringIndex(text, int(most)+1)))
		if k > most {
			return n + 1 // more than fit: refused whatever the exact count
		}
		if !ascii {
			// A character outside the BMP is one position for Go's engine and two here.
			for i := 0; i < len(text); i++ {
				if text[i] >= 0xF0 {
					k++
				}
			}
			k++
		}
		return k
	}
	if err := x.wrapSymbol(rp, goja.SymMatch, func(orig goja.Callable, fc goja.FunctionCall) goja.Value {
		s, n := x.stringArg(fc.Argument(0))
		if global, groups, perChar, goRe := info(fc.This, s); global {
			cost := func(k int64) int64 {
				return n*perChar + k*(bytesPerMatch+groups*bytesPerGroup+bytesPerPiece) + n*bytesPerChar
			}
			k := matches("RegExp.prototype[Symbol.match]", goRe, s, n, cost)
			x.allow("RegExp.prototype[Symbol.match] of "+strconv.FormatInt(k, 10)+" matches", cost(k))
		}
		return x.invoke(orig, fc.This, s)
	}); err != nil {
		return err
	}
	if err := x.wrapSymbol(rp, goja.SymSplit, func(orig goja.Callable, fc goja.FunctionCall) goja.Value {
		s, n := x.stringArg(fc.Argument(0))
		_, groups, perChar, goRe := info(fc.This, s)
		lim := int64(1) << 32
		limit := fc.Argument(1)
		if !goja.IsUndefined(limit) {
			limit = limit.ToNumber()
			lim = int64(uint32(limit.ToInteger()))
		}
		cost := func(k int64) int64 {
			return n*perChar + k*(bytesPerMatch+groups*bytesPerGroup) + min(lim, (k+1)*(groups+1))*bytesPerPiece + n*bytesPerChar
		}
		k := matches("RegExp.prototype[Symbol.split]", goRe, s, n, cost)
		x.allow("RegExp.prototype[Symbol.split] at "+strconv.FormatInt(k, 10)+" matches", cost(k))
		return x.invoke(orig, fc.This, s, limit)
	}); err != nil {
		return err
	}
	if err := x.wrapSymbol(rp, goja.SymReplace, func(orig goja.Callable, fc goja.FunctionCall) goja.Value {
		s, n := x.stringArg(fc.Argument(0))
		k := int64(1)
		if global, groups, perChar, goRe := info(fc.This, s); global {
			cost := func(k int64) int64 { return n*perChar + k*(bytesPerMatch+groups*bytesPerGroup) }
			k = matches("RegExp.prototype[Symbol.replace]", goRe, s, n, cost)
			x.allow("RegExp.prototype[Symbol.replace] of "+strconv.FormatInt(k, 10)+" matches", cost(k))
		}
		return x.invoke(orig, fc.This, s, x.replacement("RegExp.prototype[Symbol.replace]", fc.Argument(1), n, k))
	}); err != nil {
		return err
	}
	pattern := func(what string, args []goja.Value) {
		if len(args) > 0 {
			if s, ok := args[0].(goja.String); ok {
				x.allow(what+" of "+strconv.Itoa(s.Length())+" characters", int64(s.Length())*bytesPerPatternChar)
			}
		}
	}
	if err := x.check(rp, "compile", func(_ goja.Value, args []goja.Value) { pattern("RegExp.prototype.compile", args) }); err != nil {
		return err
	}
	return x.guardConstructor("RegExp", func(args []goja.Value) { pattern("RegExp", args) })
}

// goPattern is the pattern src (with flags) compiled for Go's regexp engine when goja
// runs it there, as its compileRegexp decides (an ASCII pattern that its parser translates
// and Go's engine compiles), and nil when goja runs it on regexp2. Cached for the run.
func (x *run) goPattern(src, flags string) *regexp.Regexp {
	key := flags + "/" + src
	if re, ok := x.patterns[key]; ok {
		return re
	}
	var re *regexp.Regexp
	if _, ascii := asciiOf(x.vm.ToValue(src).(goja.String)); ascii {
		if re2, err := parser.TransformRegExp(src, strings.Contains(flags, "s"), strings.Contains(flags, "u")); err == nil {
			var mods string
			for _, f := range "msi" {
				if strings.ContainsRune(flags, f) {
					mods += string(f)
				}
			}
			if mods != "" {
				re2 = "(?" + mods + ":" + re2 + ")"
			}
			re, _ = regexp.Compile(re2)
		}
	}
	if x.patterns == nil {
		x.patterns = map[string]*regexp.Regexp{}
	}
	x.patterns[key] = re
	return re
}

func (x *run) guardJSON() error {
	vm := x.vm
	j := x.global("JSON")
	stringify, _ := goja.AssertFunction(j.Get("stringify"))
	parse, _ := goja.AssertFunction(j.Get("parse"))
	isArray, _ := goja.AssertFunction(x.global("Array").Get("isArray"))
	metered := vm.ToValue(func(fc goja.FunctionCall) goja.Value {
		return x.stringifyMetered(stringify, isArray, fc.Argument(0), fc.Argument(1), fc.Argument(2))
	})
	parsed := vm.ToValue(func(fc goja.FunctionCall) goja.Value {
		text, _ := x.stringArg(fc.Argument(0))
		x.allow("JSON.parse of "+strconv.Itoa(text.Length())+" characters", jsonCost(text))
		return x.invoke(parse, goja.Undefined(), append([]goja.Value{text}, fc.Arguments[min(1, len(fc.Arguments)):]...)...)
	})
	// The bridge encodes arguments and results and decodes results with the guarded
	// functions too (its own references, which the program cannot replace).
	x.stringify, _ = goja.AssertFunction(metered)
	x.parse, _ = goja.AssertFunction(parsed)
	if err := j.DefineDataProperty("stringify", metered, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
		return err
	}
	return j.DefineDataProperty("parse", parsed, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// jsonParseCost estimates what JSON.parse builds from text: its strings, and per object or
// array, member and item (an upper bound measured on goja; docs/ptc.md).
type jsonParseCost struct{ chars, containers, members, items int64 }

func (c *jsonParseCost) count(b byte) {
	switch b {
	case '{', '[':
		c.containers++
	case ':':
		c.members++
	case ',':
		c.items++
	}
}

func (c *jsonParseCost) bytes() int64 {
	return c.chars*bytesPerChar + c.containers*jsonBytesPerContainer + c.members*jsonBytesPerMember + c.items*jsonBytesPerItem
}

// jsonCost is the jsonParseCost of a string of the program.
func jsonCost(text goja.String) int64 {
	c := jsonParseCost{chars: int64(text.Length())}
	if ascii, ok := asciiOf(text); ok {
		for i := 0; i < len(ascii); i++ {
			c.count(ascii[i])
		}
	} else {
		for i := range text.Length() {
			if u := text.CharAt(i); u < 0x80 {
				c.count(byte(u))
			}
		}
	}
	return c.bytes()
}

// jsonCostBytes is the jsonParseCost of JSON text from Go (a tool's result), which the
// bridge also copies into a string of the interpreter.
func jsonCostBytes(text []byte) int64 {
	c := jsonParseCost{chars: int64(len(text))}
	for _, b := range text {
		c.count(b)
	}
	return c.bytes() + int64(len(text))*bytesPerChar
}

// asciiOf returns the bytes of a string goja holds as ASCII (without copying them).
func asciiOf(s goja.String) (string, bool) {
	if v := reflect.ValueOf(s); v.Kind() == reflect.String {
		return v.String(), true
	}
	return "", false
}

// jsonWriter is the state of one JSON.stringify call (see stringifyMetered).
type jsonWriter struct {
	user  goja.Callable  // the program's replacer function
	list  []string       // the program's property list
	gap   int64          // the indentation's width
	m     meter          // what the text adds up to
	stack []*goja.Object // the containers being written, innermost last
}

// stringifyMetered is JSON.stringify with a replacer of its own, called for every value on
// the way: it applies the program's replacer (a function, or a list of property names,
// which it emulates by handing on copies with those properties in that order), counts the
// characters each value adds (its key, separators and indentation, a primitive's text) and
// asks the budget as they add up. The replacer is one function per run, working on the
// innermost call's jsonWriter (a toJSON may stringify in turn).
func (x *run) stringifyMetered(stringify, isArray goja.Callable, v, replacer, space goja.Value) goja.Value {
	vm := x.vm
	w := &jsonWriter{m: meter{x: x, what: "JSON.stringify"}}
	if f, ok := goja.AssertFunction(replacer); ok {
		w.user = f
	} else if o, ok := replacer.(*goja.Object); ok && x.invoke(isArray, goja.Undefined(), o).ToBoolean() {
		w.list = []string{}
		for i := range x.lengthOf(o) {
			e := o.Get(strconv.FormatInt(i, 10))
			switch {
			case goja.IsString(e), goja.IsNumber(e):
			case e != nil && (e.ToObject(vm).ClassName() == "String" || e.ToObject(vm).ClassName() == "Number"):
				if _, obj := e.(*goja.Object); !obj {
					continue
				}
			default:
				continue
			}
			if name := e.String(); !slices.Contains(w.list, name) {
				w.list = append(w.list, name)
			}
		}
	}
	if o, ok := space.(*goja.Object); ok && (o.ClassName() == "Number" || o.ClassName() == "String") {
		space = o.ToString()
		if o.ClassName() == "Number" {
			space = o.ToNumber()
		}
	}
	switch {
	case goja.IsNumber(space):
		w.gap = max(0, min(10, space.ToInteger()))
	case goja.IsString(space):
		w.gap = min(10, int64(space.(goja.String).Length()))
	}
	if x.jsonReplacer == nil {
		x.jsonReplacer = vm.ToValue(func(fc goja.FunctionCall) goja.Value {
			return x.jsonWriters[len(x.jsonWriters)-1].visit(x, isArray, fc)
		})
	}
	x.jsonWriters = append(x.jsonWriters, w)
	defer func() { x.jsonWriters = x.jsonWriters[:len(x.jsonWriters)-1] }()
	return x.invoke(stringify, goja.Undefined(), v, x.jsonReplacer, space)
}

// visit is the replacer's call for one value.
func (w *jsonWriter) visit(x *run, isArray goja.Callable, fc goja.FunctionCall) goja.Value {
	holder, _ := fc.This.(*goja.Object)
	key, val := fc.Argument(0), fc.Argument(1)
	if w.user != nil {
		val = x.invoke(w.user, fc.This, key, val)
	}
	for len(w.stack) > 0 && (holder == nil || !w.stack[len(w.stack)-1].SameAs(holder)) {
		w.stack = w.stack[:len(w.stack)-1]
	}
	depth := int64(len(w.stack))
	chars := int64(1) // a comma or the colon
	if w.gap > 0 {
		chars += 1 + depth*w.gap
	}
	if holder != nil && holder.ClassName() != "Array" {
		chars += valueChars(key) + 3
	}
	switch o, isObj := val.(*goja.Object); {
	case !isObj:
		if s, ok := val.(goja.String); ok {
			chars += quotedChars(s)
		} else {
			chars += valueChars(val)
		}
	case o.ClassName() == "String" || o.ClassName() == "Number" || o.ClassName() == "Boolean":
		chars += valueChars(o.ToString()) * 6
	default:
		if _, fn := goja.AssertFunction(o); fn {
			break
		}
		chars += 2
		if w.gap > 0 {
			chars += 1 + depth*w.gap
		}
		if w.list != nil && !x.invoke(isArray, goja.Undefined(), o).ToBoolean() {
			picked := x.vm.NewObject()
			for _, name := range w.list {
				if pv := o.Get(name); pv != nil && !goja.IsUndefined(pv) {
					_ = picked.DefineDataProperty(name, pv, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
				}
			}
			o, val = picked, picked
		}
		w.stack = append(w.stack, o)
	}
	w.m.add(chars * bytesPerChar)
	return val
}

// quotedChars is the length of s written as a JSON string.
func quotedChars(s goja.String) int64 {
	n := int64(s.Length())
	extra := int64(2)
	if ascii, ok := asciiOf(s); ok {
		for i := 0; i < len(ascii); i++ {
			switch c := ascii[i]; {
			case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
				extra++
			case c < 0x20:
				extra += 5
			}
		}
		return n + extra
	}
	for i := range int(n) {
		switch c := s.CharAt(i); {
		case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
			extra++
		case c < 0x20 || c >= 0xD800 && c <= 0xDFFF:
			extra += 5 // control characters, and lone surrogates, as \uXXXX
		}
	}
	return n + extra
}
