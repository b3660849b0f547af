package jsoncheck

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/cordisgo/harness/internal/jsonstr"
)

// decodeJSON decodes raw, for the schema validator, into exactly the value json.Unmarshal
// into an any would produce (map[string]any, []any, string, float64, bool, nil), in one
// pass and without the reflection and scanner state machine of encoding/json. ok is false
// when raw is not valid JSON, or holds something this decoder leaves to encoding/json (a
// number out of float64's range, nesting deeper than maxDecodeDepth); the caller then falls
// back to encoding/json, which also produces the error messages. Strings with escapes are
// unquoted by encoding/json itself.
func decodeJSON(raw []byte) (v any, ok bool) {
	d := decoder{b: raw}
	d.space()
	v, ok = d.value(0)
	if !ok {
		return nil, false
	}
	d.space()
	return v, d.i == len(d.b)
}

// maxDecodeDepth bounds the nesting decodeJSON handles itself.
const maxDecodeDepth = 256

type decoder struct {
	b []byte
	i int
}

// space skips JSON whitespace.
func (d *decoder) space() { d.i = jsonstr.Space(d.b, d.i) }

func (d *decoder) value(depth int) (any, bool) {
	if d.i >= len(d.b) {
		return nil, false
	}
	switch c := d.b[d.i]; {
	case c == '{':
		return d.object(depth + 1)
	case c == '[':
		return d.array(depth + 1)
	case c == '"':
		s, ok := d.str()
		return s, ok
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return d.number()
	}
	return nil, false
}

func (d *decoder) literal(lit string) bool {
	if len(d.b)-d.i < len(lit) || string(d.b[d.i:d.i+len(lit)]) != lit {
		return false
	}
	d.i += len(lit)
	return true
}

func (d *decoder) object(depth int) (any, bool) {
	if depth > maxDecodeDepth {
		return nil, false
	}
	d.i++ // '{'
	m := make(map[string]any)
	if d.closes('}') {
		return m, true
	}
	for {
		if d.i >= len(d.b) || d.b[d.i] != '"' {
			return nil, false
		}
		k, ok := d.str()
		if !ok || !d.colon() {
			return nil, false
		}
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		m[k] = v // the last of duplicate keys wins, as with encoding/json
		if more, ok := d.next('}'); !ok {
			return nil, false
		} else if !more {
			return m, true
		}
	}
}

func (d *decoder) array(depth int) (any, bool) {
	if depth > maxDecodeDepth {
		return nil, false
	}
	d.i++               // '['
	a := make([]any, 0) // encoding/json decodes [] as an empty, non-nil slice
	if d.closes(']') {
		return a, true
	}
	for {
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		if more, ok := d.next(']'); !ok {
			return nil, false
		} else if !more {
			return a, true
		}
	}
}

// closes skips space and, when the container ends there with end, consumes it.
func (d *decoder) closes(end byte) bool {
	d.space()
	if d.i < len(d.b) && d.b[d.i] == end {
		d.i++
		return true
	}
	return false
}

// colon consumes the ':' after an object key, with the space around it.
func (d *decoder) colon() bool {
	d.space()
	if d.i >= len(d.b) || d.b[d.i] != ':' {
		return false
	}
	d.i++
	d.space()
	return true
}

// next consumes what follows a member or element: a ',' (more is true) or the container's
// end (more is false); ok is false for anything else.
func (d *decoder) next(end byte) (more, ok bool) {
	d.space()
	if d.i >= len(d.b) {
		return false, false
	}
	switch d.b[d.i] {
	case ',':
		d.i++
		d.space()
		return true, true
	case end:
		d.i++
		return false, true
	}
	return false, false
}

// str decodes the string starting at the opening quote at d.i.
func (d *decoder) str() (string, bool) {
	start := d.i
	plain := true // no escapes, ASCII only
	for i := start + 1; i < len(d.b); i++ {
		switch c := d.b[i]; {
		case c == '"':
			d.i = i + 1
			body := d.b[start+1 : i]
			if plain || utf8.Valid(body) {
				return string(body), true
			}
			// Invalid UTF-8: encoding/json replaces it; let it.
			return unquote(d.b[start:d.i])
		case c == '\\':
			// An escape: find the closing quote, then let encoding/json unquote (it
			// validates the escapes).
			for i += 2; i < len(d.b); i++ { // past the backslash and the escaped byte
				switch d.b[i] {
				case '\\':
					i++
				case '"':
					d.i = i + 1
					return unquote(d.b[start:d.i])
				}
			}
			return "", false
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			plain = false
		}
	}
	return "", false
}

func unquote(quoted []byte) (string, bool) {
	var s string
	if err := json.Unmarshal(quoted, &s); err != nil {
		return "", false
	}
	return s, true
}

// number decodes a number into a float64 as encoding/json does (strconv.ParseFloat of the
// literal).
func (d *decoder) number() (any, bool) {
	f, ok := d.float()
	if !ok {
		return nil, false
	}
	return f, true
}

// float is number without boxing the value. An integer literal of at most 15 digits is
// exact in a float64, so it is converted directly, as ParseFloat would round it (not at
// all), without ParseFloat's allocation.
func (d *decoder) float() (float64, bool) {
	lit, integer, ok := d.numberLiteral()
	if !ok {
		return 0, false
	}
	if integer {
		mag, neg := lit, lit[0] == '-'
		if neg {
			mag = lit[1:]
		}
		if len(mag) <= 15 {
			var v int64
			for _, c := range mag {
				v = v*10 + int64(c-'0')
			}
			f := float64(v)
			if neg {
				f = -f // "-0" is -0.0, as ParseFloat gives
			}
			return f, true
		}
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	return f, err == nil // out of range: encoding/json reports it
}

// numberLiteral scans a number with JSON's grammar,
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, and returns its literal; integer reports
// one without fraction or exponent.
func (d *decoder) numberLiteral() (lit []byte, integer, ok bool) {
	b, start, i := d.b, d.i, d.i
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return nil, false, false
	}
	integer = true
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return nil, false, false
		}
		i, integer = j, false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return nil, false, false
		}
		i, integer = j, false
	}
	d.i = i
	return b[start:i], integer, true
}

// digits returns the index after the run of decimal digits starting at i.
func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}
