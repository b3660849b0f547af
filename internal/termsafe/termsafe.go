// Package termsafe is the module's one rule for writing untrusted text (from MCP servers and
// models: descriptions, names, versions, results, stderr, instructions, log messages) to a
// terminal: control characters never reach it. ESC and the other C0 controls, DEL and the
// C1 controls (U+0080–U+009F, and the same bytes when they are not valid UTF-8) are shown as
// visible escapes ("\x1b", "\u009b", "\x9b"), so that a server cannot move the cursor,
// retitle the window, clear the screen or hide text; so are the bidirectional overrides and
// isolates (U+202A–U+202E, U+2066–U+2069), which reorder what is shown; "\r\n" becomes "\n".
//
// [String] keeps newlines and tabs (multi-line output); [Line] shows them too (a table cell,
// a status line); [Writer] applies String to everything written through it. JSON output
// (--json) does not go through this package: scripts get the text unchanged.
//
// Everything here is safe for concurrent use except a [Writer], which is as safe as the
// writer it wraps.
package termsafe

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// String returns s with every control character but newline and tab shown as a visible escape.
func String(s string) string { return clean(s, false) }

// Line returns s with every control character shown as a visible escape, newlines and tabs
// included: one line.
func Line(s string) string { return clean(s, true) }

// safe reports whether s needs no change (the common case: no allocation).
func safe(s string, line bool) bool {
	for i := 0; i < len(s); i++ {
		b := s[i]
		switch {
		case b == '\n' || b == '\t':
			if line {
				return false
			}
		case b < 0x20 || b == 0x7f:
			return false
		case b >= 0x80:
			return !slowUnsafe(s[i:], line)
		}
	}
	return true
}

// slowUnsafe scans the rest of s rune by rune.
func slowUnsafe(s string, line bool) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if control(r, line) || (r == utf8.RuneError && n == 1) {
			return true
		}
		i += n
	}
	return false
}

func control(r rune, line bool) bool {
	switch {
	case r == '\n' || r == '\t':
		return line
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true // bidirectional overrides and isolates: they reorder what is shown
	}
	return false
}

func clean(s string, line bool) string {
	if safe(s, line) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\r' && i+1 < len(s) && s[i+1] == '\n' && !line:
			// "\r\n": the newline alone.
		case r == '\n' && line:
			b.WriteString(`\n`)
		case r == '\t' && line:
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case control(r, line) && r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case control(r, line):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Writer returns a writer that writes everything through String to w. A UTF-8 sequence cut
// between two writes is held until the next write (one still incomplete after the last
// write is not written).
func Writer(w io.Writer) io.Writer { return &writer{w: w} }

type writer struct {
	w    io.Writer
	tail []byte // the start of a UTF-8 sequence cut by the last write
}

func (w *writer) Write(p []byte) (int, error) {
	buf := append(w.tail, p...)
	w.tail = nil
	// Hold an incomplete final sequence (at most 3 bytes) for the next write.
	if k := incomplete(buf); k > 0 {
		w.tail = append([]byte(nil), buf[len(buf)-k:]...)
		buf = buf[:len(buf)-k]
	}
	if _, err := io.WriteString(w.w, String(string(buf))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// incomplete returns the length of a UTF-8 sequence at the end of b that more bytes could
// complete, 0 when there is none.
func incomplete(b []byte) int {
	for k := 1; k <= 3 && k <= len(b); k++ {
		c := b[len(b)-k]
		if c < 0x80 {
			return 0
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-k:]) {
				return k
			}
			return 0
		}
	}
	return 0
}
