package modeltest

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// The request body is checked once with json.Valid; the rules then take it apart with the
// splitters below, which rely on that check: they find where values end without validating
// them again, and the raw values they return are slices of the body, not copies. With the
// whole history sent back on every request, decoding each level with json.Unmarshal instead
// (a validation pass and a copy per level) made the server's time per request grow several
// times faster than the client's.

// members splits a JSON object (valid, its first non-space byte '{') into its raw members,
// as json.Unmarshal into a map[string]json.RawMessage does: a repeated key keeps its last
// value.
func members(raw []byte) map[string]json.RawMessage {
	t := bytes.TrimSpace(raw)
	m := map[string]json.RawMessage{}
	for i := space(t, 1); i < len(t) && t[i] != '}'; {
		end := stringEnd(t, i)
		key := unquote(t[i:end])
		i = space(t, end) + 1 // the colon
		i = space(t, i)
		end = valueEnd(t, i)
		m[key] = t[i:end:end]
		i = space(t, end)
		if i < len(t) && t[i] == ',' {
			i = space(t, i+1)
		}
	}
	return m
}

// elements splits a JSON array (valid, its first non-space byte '[') into its raw elements.
func elements(raw []byte) []json.RawMessage {
	t := bytes.TrimSpace(raw)
	var list []json.RawMessage
	for i := space(t, 1); i < len(t) && t[i] != ']'; {
		end := valueEnd(t, i)
		list = append(list, t[i:end:end])
		i = space(t, end)
		if i < len(t) && t[i] == ',' {
			i = space(t, i+1)
		}
	}
	return list
}

// unquote decodes a valid JSON string as json.Unmarshal does; one without escapes whose
// bytes are valid UTF-8 is its bytes between the quotes.
func unquote(raw []byte) string {
	if in := raw[1 : len(raw)-1]; bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
		return string(in)
	}
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// space returns the index of the first byte at or after i that is not JSON white space.
func space(t []byte, i int) int {
	for i < len(t) && (t[i] == ' ' || t[i] == '\n' || t[i] == '\r' || t[i] == '\t') {
		i++
	}
	return i
}

// stringEnd returns the index just after the valid JSON string that starts at t[i].
func stringEnd(t []byte, i int) int {
	for i++; ; {
		q := bytes.IndexByte(t[i:], '"')
		if q < 0 {
			return len(t)
		}
		i += q
		// The quote closes the string unless an odd number of backslashes precede it.
		n := 0
		for n < i && t[i-1-n] == '\\' {
			n++
		}
		i++
		if n%2 == 0 {
			return i
		}
	}
}

// valueEnd returns the index just after the valid JSON value that starts at t[i].
func valueEnd(t []byte, i int) int {
	switch t[i] {
	case '"':
		return stringEnd(t, i)
	case '{', '[':
		depth := 0
		for i < len(t) {
			switch t[i] {
			case '"':
				i = stringEnd(t, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	// A number, true, false or null: up to the next delimiter.
	for i < len(t) && t[i] != ',' && t[i] != '}' && t[i] != ']' && space(t, i) == i {
		i++
	}
	return i
}
