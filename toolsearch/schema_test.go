package toolsearch

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// refSchema and paramTextReference are the parameter text decoded with encoding/json (the
// index's first implementation): the reference paramText must agree with wherever the
// reference decodes the schema.
type refSchema struct {
	Description          string                `json:"description"`
	Properties           map[string]*refSchema `json:"properties"`
	Items                json.RawMessage       `json:"items"`
	AnyOf                []*refSchema          `json:"anyOf"`
	OneOf                []*refSchema          `json:"oneOf"`
	AllOf                []*refSchema          `json:"allOf"`
	Defs                 map[string]*refSchema `json:"$defs"`
	Definitions          map[string]*refSchema `json:"definitions"`
	AdditionalProperties json.RawMessage       `json:"additionalProperties"`
}

func paramTextReference(schema []byte) (string, bool) {
	var n refSchema
	if err := json.Unmarshal(schema, &n); err != nil {
		return "", false
	}
	var b strings.Builder
	ok := refWalk(&n, &b, 0)
	return b.String(), ok
}

func refWalk(n *refSchema, b *strings.Builder, depth int) bool {
	if n == nil || depth > 6 || b.Len() > maxParamText {
		return true
	}
	ok := true
	keys := make([]string, 0, len(n.Properties))
	for k := range n.Properties {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b.WriteString(k + " ")
		if p := n.Properties[k]; p != nil {
			if p.Description != "" {
				b.WriteString(p.Description + " ")
			}
			ok = refWalk(p, b, depth+1) && ok
		}
	}
	for _, raw := range []json.RawMessage{n.Items, n.AdditionalProperties} {
		switch {
		case len(raw) == 0:
		case raw[0] == '{':
			var c refSchema
			if json.Unmarshal(raw, &c) != nil {
				return false
			}
			ok = refWalk(&c, b, depth+1) && ok
		case raw[0] == '[':
			var list []*refSchema
			if json.Unmarshal(raw, &list) != nil {
				return false
			}
			for _, c := range list {
				ok = refWalk(c, b, depth+1) && ok
			}
		}
	}
	for _, list := range [][]*refSchema{n.AnyOf, n.OneOf, n.AllOf} {
		for _, c := range list {
			ok = refWalk(c, b, depth+1) && ok
		}
	}
	for _, defs := range []map[string]*refSchema{n.Defs, n.Definitions} {
		names := make([]string, 0, len(defs))
		for k := range defs {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			ok = refWalk(defs[k], b, depth+1) && ok
		}
	}
	return ok
}

// comparable reports whether the reference's answer for schema is the one paramText must
// give: the reference decodes it, and its keywords are spelled exactly (encoding/json
// matches "Properties" too; JSON Schema keywords are case-sensitive), without escapes or
// invalid UTF-8 in names.
func comparable(schema []byte) bool {
	if !json.Valid(schema) || bytes.ContainsAny(schema, "\\") || !bytes.Equal(bytes.ToValidUTF8(schema, nil), schema) {
		return false
	}
	lower := bytes.ToLower(schema)
	for _, k := range []string{"description", "properties", "items", "additionalProperties", "anyOf", "oneOf", "allOf", "$defs", "definitions"} {
		q := []byte(`"` + k + `"`)
		if bytes.Count(lower, bytes.ToLower(q)) != bytes.Count(schema, q) {
			return false
		}
	}
	_, ok := paramTextReference(schema)
	return ok
}

// TestParamTextCatalog: over every schema of the evaluation catalog, paramText gives the
// reference's text.
func TestParamTextCatalog(t *testing.T) {
	n := 0
	for _, s := range loadCatalog(t) {
		for _, tl := range s.Tools {
			want, ok := paramTextReference(tl.InputSchema)
			if !ok {
				t.Errorf("%s/%s: the reference cannot decode the schema", s.Name, tl.Name)
				continue
			}
			if got := paramText(tl.InputSchema); got != want {
				t.Errorf("%s/%s: paramText\n got %q\nwant %q", s.Name, tl.Name, got, want)
			}
			n++
		}
	}
	if n < 300 {
		t.Fatalf("%d schemas compared, want the catalog's 315", n)
	}
}

var paramTextCases = []struct {
	name, schema, want string
}{
	{"empty", ``, ""},
	{"not an object", `[1, 2]`, ""},
	{"malformed", `{"properties": {"a": {"description": "x"}`, ""},
	{"leading space", " \n{\"properties\": {\"b\": {}, \"a\": {\"description\": \"first\"}}}", "a first b "},
	{"escapes", `{"properties": {"caf\u00e9": {"description": "line\none \"quoted\" \ud83d\ude00 \ud800"}}}`,
		"café line\none \"quoted\" 😀 \uFFFD "},
	{"duplicate names: the last", `{"properties": {"a": {"description": "one"}, "a": {"description": "two"}}}`, "a two "},
	{"nested", `{"properties": {"q": {"type": "object", "properties": {"z": {"description": "zz"}, "y": {}}}},
	  "items": {"properties": {"it": {}}}, "anyOf": [{"properties": {"any": {}}}, true],
	  "$defs": {"b": {"properties": {"defb": {}}}, "a": {"properties": {"defa": {}}}}}`,
		"q y z zz it any defa defb "},
	{"items as an array", `{"items": [{"properties": {"first": {}}}, {"properties": {"second": {}}}]}`, "first second "},
	// a member of another type than JSON Schema allows is skipped (encoding/json failed the
	// whole schema)
	{"boolean property schema", `{"properties": {"flag": true, "name": {"description": "the name"}}}`, "flag name the name "},
	{"description not a string", `{"properties": {"a": {"description": 5}}}`, "a "},
	{"depth", `{"properties": {"l1": {"properties": {"l2": {"properties": {"l3": {"properties": {"l4": {"properties": {"l5": {"properties": {"l6": {"properties": {"l7": {"description": "seventh", "properties": {"l8": {}}}}}}}}}}}}}}}}}`,
		"l1 l2 l3 l4 l5 l6 l7 seventh "},
}

func TestParamText(t *testing.T) {
	for _, tc := range paramTextCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := paramText(json.RawMessage(tc.schema)); got != tc.want {
				t.Errorf("paramText(%s)\n got %q\nwant %q", tc.schema, got, tc.want)
			}
			if comparable([]byte(tc.schema)) {
				if ref, _ := paramTextReference([]byte(tc.schema)); ref != tc.want {
					t.Errorf("the reference gives %q", ref)
				}
			}
		})
	}
}

// FuzzParamText: paramText never panics, and agrees with the reference wherever the
// reference decodes the schema.
func FuzzParamText(f *testing.F) {
	for _, tc := range paramTextCases {
		f.Add([]byte(tc.schema))
	}
	for i, s := range loadCatalog(f) {
		if i%3 == 0 && len(s.Tools) > 0 {
			f.Add([]byte(s.Tools[0].InputSchema))
		}
	}
	f.Fuzz(func(t *testing.T, schema []byte) {
		got := paramText(schema)
		if !comparable(schema) {
			return
		}
		if want, _ := paramTextReference(schema); got != want {
			t.Errorf("paramText(%s)\n got %q\nwant %q", schema, got, want)
		}
	})
}
