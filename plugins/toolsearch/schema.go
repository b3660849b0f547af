package toolsearch

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode"
)

// maxParamText bounds the parameter text indexed per tool, so that one enormous schema
// costs the index no more than a large ordinary one.
const maxParamText = 8 << 10

// paramText returns the names and descriptions of a schema's properties, nested ones
// included (through properties, items, anyOf/oneOf/allOf and $defs), space-separated.
func paramText(schema json.RawMessage) string {
	if len(schema) == 0 {
		return ""
	}
	var v any
	if err := json.Unmarshal(schema, &v); err != nil {
		return ""
	}
	var b strings.Builder
	walkSchema(v, &b, 0)
	return b.String()
}

func walkSchema(v any, b *strings.Builder, depth int) {
	if depth > 6 || b.Len() > maxParamText {
		return
	}
	m, ok := v.(map[string]any)
	if !ok {
		if arr, ok := v.([]any); ok {
			for _, x := range arr {
				walkSchema(x, b, depth+1)
			}
		}
		return
	}
	if props, ok := m["properties"].(map[string]any); ok {
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			b.WriteString(k)
			b.WriteByte(' ')
			if p, ok := props[k].(map[string]any); ok {
				if d, ok := p["description"].(string); ok {
					b.WriteString(d)
					b.WriteByte(' ')
				}
				walkSchema(p, b, depth+1)
			}
		}
	}
	for _, k := range []string{"items", "anyOf", "oneOf", "allOf", "$defs", "definitions", "additionalProperties"} {
		if x, ok := m[k]; ok {
			if k == "$defs" || k == "definitions" {
				if defs, ok := x.(map[string]any); ok {
					for _, d := range defs {
						walkSchema(d, b, depth+1)
					}
				}
				continue
			}
			walkSchema(x, b, depth+1)
		}
	}
}

// purposeOf returns the one-line purpose of a tool: the first sentence of its description
// (or its title when it has none), whitespace collapsed, control characters dropped, at most
// 200 bytes.
func purposeOf(title, desc string) string {
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

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// clean collapses runs of white space to one space and drops control and format characters
// (terminal escapes included), so that server text is safe to print on one line.
func clean(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
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
		b.WriteRune(r)
	}
	return b.String()
}
