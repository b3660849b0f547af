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

// schemaNode is the part of a JSON schema the index reads: property names and
// descriptions, through nested schemas. Decoding into it skips every other keyword.
type schemaNode struct {
	Description          string                 `json:"description"`
	Properties           map[string]*schemaNode `json:"properties"`
	Items                json.RawMessage        `json:"items"` // a schema or (draft-07) an array of them
	AnyOf                []*schemaNode          `json:"anyOf"`
	OneOf                []*schemaNode          `json:"oneOf"`
	AllOf                []*schemaNode          `json:"allOf"`
	Defs                 map[string]*schemaNode `json:"$defs"`
	Definitions          map[string]*schemaNode `json:"definitions"`
	AdditionalProperties json.RawMessage        `json:"additionalProperties"`
}

// paramText returns the names and descriptions of a schema's properties, nested ones
// included (through properties, items, anyOf/oneOf/allOf and $defs), space-separated.
func paramText(schema json.RawMessage) string {
	if len(schema) == 0 {
		return ""
	}
	var n schemaNode
	if err := json.Unmarshal(schema, &n); err != nil {
		return ""
	}
	var b strings.Builder
	walkSchema(&n, &b, 0)
	return b.String()
}

func walkSchema(n *schemaNode, b *strings.Builder, depth int) {
	if n == nil || depth > 6 || b.Len() > maxParamText {
		return
	}
	keys := make([]string, 0, len(n.Properties))
	for k := range n.Properties {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(' ')
		if p := n.Properties[k]; p != nil {
			if p.Description != "" {
				b.WriteString(p.Description)
				b.WriteByte(' ')
			}
			walkSchema(p, b, depth+1)
		}
	}
	for _, raw := range []json.RawMessage{n.Items, n.AdditionalProperties} {
		walkRaw(raw, b, depth+1)
	}
	for _, list := range [][]*schemaNode{n.AnyOf, n.OneOf, n.AllOf} {
		for _, x := range list {
			walkSchema(x, b, depth+1)
		}
	}
	for _, defs := range []map[string]*schemaNode{n.Defs, n.Definitions} {
		names := make([]string, 0, len(defs))
		for k := range defs {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			walkSchema(defs[k], b, depth+1)
		}
	}
}

// walkRaw walks a member that is a schema, an array of schemas, or a boolean.
func walkRaw(raw json.RawMessage, b *strings.Builder, depth int) {
	if len(raw) == 0 {
		return
	}
	switch raw[0] {
	case '{':
		var n schemaNode
		if json.Unmarshal(raw, &n) == nil {
			walkSchema(&n, b, depth)
		}
	case '[':
		var list []*schemaNode
		if json.Unmarshal(raw, &list) == nil {
			for _, n := range list {
				walkSchema(n, b, depth)
			}
		}
	}
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
