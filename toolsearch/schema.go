package toolsearch

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/cordisgo/harness/internal/jsonstr"
)

// maxParamText bounds the parameter text indexed per tool, so that one enormous schema
// costs the index no more than a large ordinary one.
const maxParamText = 8 << 10

// paramText returns the names and descriptions of a schema's properties, nested ones
// included (through properties, items, additionalProperties, anyOf/oneOf/allOf and
// $defs/definitions), space-separated, properties in name order.
func paramText(schema json.RawMessage) string {
	var w schemaWalker
	return string(w.text(schema))
}

// schemaWalker reads a JSON schema in one pass into a small tree of what the index uses —
// descriptions, property names, nested schemas — decoding only the strings it writes, and
// writes the parameter text from the tree. A member of an unexpected type is skipped;
// malformed JSON gives no text. Its buffers are reused from schema to schema.
//
// A schemaWalker is not safe for concurrent use.
type schemaWalker struct {
	sc    jsonScanner
	nodes []schemaNode
	out   []byte
	bad   bool
}

// schemaNode is one schema object: raw strings point into the schema's bytes.
type schemaNode struct {
	description []byte       // raw string contents, escapes not decoded
	properties  []schemaProp // in document order
	// kids are the nested schemas of items, additionalProperties, anyOf, oneOf and allOf,
	// in that order of keywords.
	kids [5][]int32
	defs [2][]schemaProp // $defs, definitions
}

// schemaProp is one member of "properties" (or of "$defs"): its name's raw contents and the
// node of its value (-1 when the value is not an object).
type schemaProp struct {
	name  []byte
	child int32
}

// maxSchemaDepth is the deepest nested schema whose properties are written; the nodes one
// deeper still give their descriptions.
const maxSchemaDepth = 6

// text returns the parameter text of schema; the bytes are valid until the next call.
func (w *schemaWalker) text(schema []byte) []byte {
	w.sc = jsonScanner{data: schema}
	w.nodes, w.out, w.bad = w.nodes[:0], w.out[:0], false
	w.sc.space()
	if len(schema) == 0 || w.sc.pos >= len(schema) || schema[w.sc.pos] != '{' {
		return nil
	}
	root := w.parse(0)
	if w.bad || root < 0 {
		return nil
	}
	w.walk(root, 0)
	if w.bad {
		return nil
	}
	return w.out
}

// propNames calls yield with the raw names of the properties of the schema [schemaWalker.text]
// read last, and of its properties' own properties (escapes not decoded).
func (w *schemaWalker) propNames(yield func(name []byte)) {
	if w.bad || len(w.nodes) == 0 {
		return
	}
	for _, p := range w.nodes[0].properties {
		yield(p.name)
		if p.child >= 0 {
			for _, q := range w.nodes[p.child].properties {
				yield(q.name)
			}
		}
	}
}

// newNode returns the index of a fresh node, reusing an earlier schema's slices.
func (w *schemaWalker) newNode() int32 {
	id := len(w.nodes)
	if id < cap(w.nodes) {
		w.nodes = w.nodes[:id+1]
		n := &w.nodes[id]
		n.description = nil
		n.properties = n.properties[:0]
		for k := range n.kids {
			n.kids[k] = n.kids[k][:0]
		}
		for k := range n.defs {
			n.defs[k] = n.defs[k][:0]
		}
	} else {
		w.nodes = append(w.nodes, schemaNode{})
	}
	return int32(id)
}

// parse reads the object at the scanner's position as a schema at depth, and returns its
// node (-1 with w.bad set on malformed JSON).
func (w *schemaWalker) parse(depth int) int32 {
	sc := &w.sc
	id := w.newNode()
	sc.pos++ // '{'
	for first := true; ; first = false {
		name, more := sc.member(first)
		if !more || sc.bad {
			break
		}
		kind := -1
		switch string(name) {
		case "description":
			if sc.peek() == '"' {
				start := sc.pos
				if !sc.skip() {
					break
				}
				w.nodes[id].description = sc.data[start+1 : sc.pos-1]
				continue
			}
		case "properties", "$defs", "definitions":
			if depth > maxSchemaDepth || sc.peek() != '{' {
				break
			}
			props := w.members(depth + 1)
			switch string(name) {
			case "properties":
				w.nodes[id].properties = append(w.nodes[id].properties, props...)
			case "$defs":
				w.nodes[id].defs[0] = append(w.nodes[id].defs[0], props...)
			default:
				w.nodes[id].defs[1] = append(w.nodes[id].defs[1], props...)
			}
			continue
		case "items":
			kind = 0
		case "additionalProperties":
			kind = 1
		case "anyOf":
			kind = 2
		case "oneOf":
			kind = 3
		case "allOf":
			kind = 4
		}
		if kind >= 0 && depth <= maxSchemaDepth {
			switch c := sc.peek(); {
			case c == '{' && kind <= 1:
				child := w.parse(depth + 1)
				w.nodes[id].kids[kind] = append(w.nodes[id].kids[kind][:0], child)
				continue
			case c == '[' && kind != 1:
				w.nodes[id].kids[kind] = w.elements(depth+1, w.nodes[id].kids[kind][:0])
				continue
			}
		}
		if !sc.skip() {
			break
		}
	}
	if sc.bad {
		w.bad = true
		return -1
	}
	return id
}

// members reads an object of schemas ("properties", "$defs") at depth.
func (w *schemaWalker) members(depth int) []schemaProp {
	sc := &w.sc
	var out []schemaProp
	sc.pos++ // '{'
	for first := true; ; first = false {
		name, more := sc.member(first)
		if !more || sc.bad {
			return out
		}
		p := schemaProp{name: name, child: -1}
		if sc.peek() == '{' {
			p.child = w.parse(depth)
		} else if !sc.skip() {
			return out
		}
		out = append(out, p)
	}
}

// elements reads an array of schemas at depth, appending their nodes to out.
func (w *schemaWalker) elements(depth int, out []int32) []int32 {
	sc := &w.sc
	sc.pos++ // '['
	for first := true; ; first = false {
		if !sc.element(first) || sc.bad {
			return out
		}
		if sc.peek() == '{' {
			out = append(out, w.parse(depth))
		} else if !sc.skip() {
			return out
		}
	}
}

// walk writes the parameter text of node id at depth: each property's name and
// description, then its nested schemas'.
func (w *schemaWalker) walk(id int32, depth int) {
	if id < 0 || depth > maxSchemaDepth || len(w.out) > maxParamText {
		return
	}
	n := &w.nodes[id]
	for _, p := range sortedProps(n.properties) {
		w.out = appendJSONString(w.out, p.name, &w.bad)
		w.out = append(w.out, ' ')
		if p.child < 0 {
			continue
		}
		if d := w.nodes[p.child].description; len(d) > 0 {
			w.out = appendJSONString(w.out, d, &w.bad)
			w.out = append(w.out, ' ')
		}
		w.walk(p.child, depth+1)
	}
	for _, kids := range n.kids {
		for _, k := range kids {
			w.walk(k, depth+1)
		}
	}
	for _, defs := range n.defs {
		for _, p := range sortedProps(defs) {
			w.walk(p.child, depth+1)
		}
	}
}

// sortedProps orders members by name, keeping the last of equal names (as a JSON object
// decoded into a map keeps it).
func sortedProps(ps []schemaProp) []schemaProp {
	slices.SortStableFunc(ps, func(a, b schemaProp) int { return compareJSONStrings(a.name, b.name) })
	out := ps[:0]
	for i, p := range ps {
		if i+1 < len(ps) && compareJSONStrings(p.name, ps[i+1].name) == 0 {
			continue
		}
		out = append(out, p)
	}
	return out
}

// jsonScanner reads JSON in place; bad is set on malformed input.
type jsonScanner struct {
	data []byte
	pos  int
	bad  bool
}

// peek returns the byte at the position (0 at the end).
func (s *jsonScanner) peek() byte {
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

// member moves to the next member of the object being read (first: right after its '{'):
// it returns the member's raw name with the position at its value, or false after the
// closing '}' or on malformed input (bad set).
func (s *jsonScanner) member(first bool) ([]byte, bool) {
	s.space()
	switch c := s.peek(); {
	case c == '}':
		s.pos++
		return nil, false
	case c == ',' && !first:
		s.pos++
		s.space()
	case !first:
		s.bad = true
		return nil, false
	}
	start := s.pos
	if s.peek() != '"' || !s.skip() {
		s.bad = true
		return nil, false
	}
	name := s.data[start+1 : s.pos-1]
	s.space()
	if s.peek() != ':' {
		s.bad = true
		return nil, false
	}
	s.pos++
	s.space()
	return name, true
}

// element moves to the next element of the array being read (first: right after its '['),
// reporting false after the closing ']' or on malformed input (bad set).
func (s *jsonScanner) element(first bool) bool {
	s.space()
	switch c := s.peek(); {
	case c == ']':
		s.pos++
		return false
	case c == ',' && !first:
		s.pos++
		s.space()
	case !first:
		s.bad = true
		return false
	}
	return true
}

// space skips JSON whitespace.
func (s *jsonScanner) space() { s.pos = jsonstr.Space(s.data, s.pos) }

// skip moves past one value (object, array, string or literal), reporting false (and
// setting bad) when the JSON is malformed. Nested values are checked for balance and string
// syntax only.
func (s *jsonScanner) skip() bool {
	if !s.skipValue() {
		s.bad = true
		return false
	}
	return true
}

func (s *jsonScanner) skipValue() bool {
	if s.pos >= len(s.data) {
		return false
	}
	switch s.data[s.pos] {
	case '"':
		for i := s.pos + 1; i < len(s.data); {
			q := bytes.IndexByte(s.data[i:], '"')
			if q < 0 {
				return false
			}
			i += q
			esc := 0 // backslashes right before the quote: an odd number escapes it
			for k := i - 1; k > s.pos && s.data[k] == '\\'; k-- {
				esc++
			}
			if esc%2 == 0 {
				s.pos = i + 1
				return true
			}
			i++
		}
		return false
	case '{', '[':
		depth := 0
		for s.pos < len(s.data) {
			switch s.data[s.pos] {
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.pos++
					return true
				}
			case '"':
				if !s.skip() {
					return false
				}
				continue
			}
			s.pos++
		}
		return false
	case ',', ':', '}', ']':
		return false
	default: // number, true, false, null
		start := s.pos
		for s.pos < len(s.data) {
			switch s.data[s.pos] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return s.pos > start
			}
			s.pos++
		}
		return s.pos > start
	}
}

// appendJSONString appends the decoded contents of a JSON string (raw: between the quotes)
// to out; an invalid escape sets *bad. Invalid UTF-8 and lone surrogates become U+FFFD, as
// encoding/json decodes them.
func appendJSONString(out, raw []byte, bad *bool) []byte {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c < utf8.RuneSelf && c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		if c != '\\' {
			r, n := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && n == 1 {
				out = utf8.AppendRune(out, utf8.RuneError)
			} else {
				out = append(out, raw[i:i+n]...)
			}
			i += n
			continue
		}
		if i+1 >= len(raw) {
			*bad = true
			return out
		}
		switch e := raw[i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(raw[i+2:])
			if !ok {
				*bad = true
				return out
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if r2, ok := hex4(raw[min(i+2, len(raw)):]); ok && i+1 < len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						out = utf8.AppendRune(out, dec)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			*bad = true
			return out
		}
		i += 2
	}
	return out
}

// hex4 decodes four hex digits.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// compareJSONStrings orders two raw JSON strings by their decoded contents (raw bytes
// compared directly when neither has an escape).
func compareJSONStrings(a, b []byte) int {
	if !slices.Contains(a, '\\') && !slices.Contains(b, '\\') {
		return bytes.Compare(a, b)
	}
	var bad bool
	return bytes.Compare(appendJSONString(nil, a, &bad), appendJSONString(nil, b, &bad))
}

// purposeOf returns the one-line purpose of a tool: the first sentence of its description
// (or its title when it has none), whitespace collapsed, control characters dropped, at most
// 200 bytes.
func purposeOf(title, desc string) string {
	if len(desc) > 1024 {
		desc = desc[:1024] // the first sentence is in there, or the purpose is cut anyway
	}
	s := clean(desc)
	if s == "" {
		s = clean(title)
	}
	if i := sentenceEnd(s); i > 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		cut := 197
		for cut > 0 && !utf8Start(s[cut]) {
			cut--
		}
		s = strings.TrimSpace(s[:cut]) + "…"
	}
	return s
}

// sentenceEnd returns the index just after the first sentence's final period, or -1.
func sentenceEnd(s string) int {
	for i := 0; i+1 < len(s); i++ {
		if (s[i] == '.' || s[i] == '!' || s[i] == '?') && s[i+1] == ' ' && i > 10 {
			return i + 1
		}
	}
	if i := strings.Index(s, "。"); i > 0 {
		return i + len("。")
	}
	return -1
}

// firstSentenceEnd returns the byte index of desc just after its first sentence (as
// sentenceEnd finds it, white space of any kind after the period), or len(desc).
func firstSentenceEnd(desc string) int {
	seen := 0 // non-space bytes so far
	for i := 0; i+1 < len(desc); i++ {
		c := desc[i]
		if (c == '.' || c == '!' || c == '?') && (desc[i+1] == ' ' || desc[i+1] == '\n' || desc[i+1] == '\t' || desc[i+1] == '\r') && seen > 10 {
			return i + 1
		}
		if c != ' ' && c != '\n' && c != '\t' && c != '\r' {
			seen++
		}
	}
	if i := strings.Index(desc, "。"); i > 0 {
		return i + len("。")
	}
	return len(desc)
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// clean collapses runs of white space to one space and drops control and format characters
// (terminal escapes included), so that server text is safe to print on one line. Text that
// needs none of it is returned as is.
func clean(s string) string {
	if isClean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c == ' ' || '\t' <= c && c <= '\r':
				space = b.Len() > 0
				continue
			case c < 0x20 || c == 0x7f:
				continue
			}
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteByte(c)
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(r)
		} else {
			b.WriteString(s[i-n : i])
		}
	}
	return b.String()
}

// isClean reports whether clean would return s unchanged: printable ASCII, no leading,
// trailing or doubled space.
func isClean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == ' ' && (i == 0 || i == len(s)-1 || s[i+1] == ' ') {
			return false
		}
	}
	return true
}
