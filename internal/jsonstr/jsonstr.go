// Package jsonstr appends Go strings as JSON strings, byte for byte as encoding/json writes
// them, for the hand-written encoders of hot paths (the MCP result adapter, the model
// provider's request body) that must not go through reflection. It is the module's one
// copy of that escaping, and of the whitespace the hand-written readers of JSON text skip
// ([Space]: the argument check's decoder, the tool index's schema scanner, the resource
// renderer's projector).
//
// Every function is pure and safe for concurrent use.
package jsonstr

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// Append appends s to b as a JSON string exactly as encoding/json encodes it: with
// escapeHTML, as json.Marshal does (<, > and & escaped); without it, as an Encoder with
// SetEscapeHTML(false). U+2028 and U+2029 are escaped and invalid UTF-8 becomes U+FFFD
// either way.
func Append(b []byte, s string, escapeHTML bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!escapeHTML || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			if r == utf8.RuneError {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			}
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Space returns the index of the first byte of b at or after i that is not JSON whitespace
// (space, tab, line feed, carriage return), len(b) when there is none.
func Space(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}
