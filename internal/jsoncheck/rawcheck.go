package jsoncheck

import (
	"unicode/utf8"
)

// acceptsRaw reports whether the JSON text raw is valid against n, checking it as it scans
// instead of decoding it into values first: the arguments of a call cost no allocation to
// validate. Like accepts, false means "not shown valid", and the caller then decodes and asks
// the full validator. It is also false for whatever the scan leaves to encoding/json: invalid
// JSON, strings with escapes or invalid UTF-8, numbers out of float64's range, nesting deeper
// than maxDecodeDepth. A key that appears twice is checked both times (encoding/json keeps
// the last), which can only make the scan stricter.
func (n *checkNode) acceptsRaw(raw []byte) bool {
	d := decoder{b: raw}
	d.space()
	if !d.check(n, 0) {
		return false
	}
	d.space()
	return d.i == len(d.b)
}

// check scans the value at d.i and reports whether it is valid against n (nil: any value,
// checked for syntax only).
func (d *decoder) check(n *checkNode, depth int) bool {
	if d.i >= len(d.b) {
		return false
	}
	switch c := d.b[d.i]; {
	case c == '{':
		return d.checkObject(n, depth+1)
	case c == '[':
		return d.checkArray(n, depth+1)
	case c == '"':
		s, ok := d.rawStr()
		return ok && (n == nil || n.acceptsBytes(s))
	case c == 't':
		return d.literal("true") && (n == nil || n.accepts(true))
	case c == 'f':
		return d.literal("false") && (n == nil || n.accepts(false))
	case c == 'n':
		return d.literal("null") && (n == nil || n.accepts(nil))
	case c == '-' || '0' <= c && c <= '9':
		f, ok := d.float()
		return ok && (n == nil || n.acceptsFloat(f))
	}
	return false
}

// container reports whether n admits a value of type t (an array or an object) at all; the
// fast checker's enums and consts hold scalars only, so they never match one.
func (n *checkNode) container(t uint8) bool {
	return n == nil || (n.types == 0 || n.types&t != 0) && !n.hasEnum && !n.hasKon
}

func (d *decoder) checkObject(n *checkNode, depth int) bool {
	if depth > maxDecodeDepth || !n.container(typeObject) || n != nil && len(n.required) > 64 {
		return false
	}
	d.i++           // '{'
	var seen uint64 // n.required[i] was present
	if d.closes('}') {
		return n == nil || len(n.required) == 0
	}
	for {
		if d.i >= len(d.b) || d.b[d.i] != '"' {
			return false
		}
		key, ok := d.rawStr()
		if !ok || !d.colon() {
			return false
		}
		var sub *checkNode
		if n != nil {
			if c, named := n.props[string(key)]; named {
				sub = c
			} else if n.noAdditional {
				return false
			} else {
				sub = n.additional
			}
			for i, r := range n.required {
				if r == string(key) {
					seen |= 1 << i
				}
			}
		}
		if !d.check(sub, depth) {
			return false
		}
		if more, ok := d.next('}'); !ok {
			return false
		} else if !more {
			return n == nil || seen == 1<<len(n.required)-1
		}
	}
}

func (d *decoder) checkArray(n *checkNode, depth int) bool {
	if depth > maxDecodeDepth || !n.container(typeArray) {
		return false
	}
	var item *checkNode
	if n != nil {
		item = n.items
	}
	d.i++ // '['
	count := 0
	if d.closes(']') {
		return n == nil || n.count(count)
	}
	for {
		if !d.check(item, depth) {
			return false
		}
		count++
		if more, ok := d.next(']'); !ok {
			return false
		} else if !more {
			return n == nil || n.count(count)
		}
	}
}

// count checks an array's length against minItems and maxItems.
func (n *checkNode) count(c int) bool {
	return (n.minItems < 0 || c >= n.minItems) && (n.maxItems < 0 || c <= n.maxItems)
}

// rawStr scans the string at d.i and returns its body, which is its value: false for a
// string with escapes or invalid UTF-8 (encoding/json unquotes or replaces those).
func (d *decoder) rawStr() ([]byte, bool) {
	start := d.i + 1
	ascii := true
	for i := start; i < len(d.b); i++ {
		switch c := d.b[i]; {
		case c == '"':
			body := d.b[start:i]
			if !ascii && !utf8.Valid(body) {
				return nil, false
			}
			d.i = i + 1
			return body, true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

// acceptsBytes is accepts for a string value, given as its bytes.
func (n *checkNode) acceptsBytes(s []byte) bool {
	if n.types != 0 && n.types&typeString == 0 {
		return false
	}
	if !n.enumConst(func(e any) bool { x, ok := e.(string); return ok && x == string(s) }) {
		return false
	}
	if n.minLen >= 0 || n.maxLen >= 0 {
		c := utf8.RuneCount(s)
		if n.minLen >= 0 && c < n.minLen || n.maxLen >= 0 && c > n.maxLen {
			return false
		}
	}
	return n.pattern == nil || n.pattern.Match(s)
}

// acceptsFloat is accepts for a number, without boxing it.
func (n *checkNode) acceptsFloat(f float64) bool {
	if t := floatType(f); n.types != 0 && n.types&t == 0 {
		return false
	}
	if !n.enumConst(func(e any) bool { x, ok := e.(float64); return ok && x == f }) {
		return false
	}
	return n.number(f)
}
