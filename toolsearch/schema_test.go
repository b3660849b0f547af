package toolsearch

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cordisgo/harness/internal/schemawalk"
)

// paramTextReference is the parameter text read from the schema as jsonschema-go parses
// it, walked by the module's one schema walker (internal/schemawalk): paramText must agree
// with it wherever the schema parses. Only the keywords the index reads are walked.
func paramTextReference(schema []byte) (string, bool) {
	root, err := schemawalk.Parse(schema)
	if err != nil || len(bytes.TrimSpace(schema)) == 0 || bytes.TrimSpace(schema)[0] != '{' {
		return "", false
	}
	indexed := map[string]bool{"properties": true, "items": true, "additionalProperties": true,
		"anyOf": true, "oneOf": true, "allOf": true, "$defs": true, "definitions": true}
	var b strings.Builder
	schemawalk.Walk(root, func(path []schemawalk.Step, s *jsonschema.Schema) bool {
		if len(path) > 0 {
			step := path[len(path)-1]
			if !indexed[step.Keyword] {
				return false
			}
			if step.Keyword == "properties" { // written by its parent, even below the depth bound
				b.WriteString(step.Name + " ")
				if s.Description != "" {
					b.WriteString(s.Description + " ")
				}
			}
		}
		return len(path) <= maxSchemaDepth && b.Len() <= maxParamText
	})
	return b.String(), true
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
