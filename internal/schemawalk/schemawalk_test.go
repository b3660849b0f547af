package schemawalk_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cordisgo/harness/internal/schemawalk"
)

func mustParse(t *testing.T, raw string) *jsonschema.Schema {
	t.Helper()
	s, err := schemawalk.Parse([]byte(raw))
	if err != nil {
		t.Fatalf("Parse(%s): %v", raw, err)
	}
	return s
}

func TestIsFalse(t *testing.T) {
	for raw, want := range map[string]bool{
		`false`:                          true,
		`{"not": {}}`:                    true, // the same schema, written out
		`true`:                           false,
		`{}`:                             false,
		`{"not": {"type": "string"}}`:    false,
		`{"not": {}, "type": "integer"}`: false,
	} {
		if got := schemawalk.IsFalse(mustParse(t, raw)); got != want {
			t.Errorf("IsFalse(%s) = %v, want %v", raw, got, want)
		}
	}
	if schemawalk.IsFalse(nil) {
		t.Error("IsFalse(nil) = true")
	}
}

func TestTypes(t *testing.T) {
	for raw, want := range map[string][]string{
		`{"type": "string"}`:           {"string"},
		`{"type": ["string", "null"]}`: {"string", "null"},
		`{}`:                           nil,
	} {
		if got := schemawalk.Types(mustParse(t, raw)); !slices.Equal(got, want) {
			t.Errorf("Types(%s) = %q, want %q", raw, got, want)
		}
	}
}

func TestRef(t *testing.T) {
	root := mustParse(t, `{"$defs": {"a/b": {"type": "string"}, "c~d": {"type": "integer"}},
		"definitions": {"old": {"type": "boolean"}}}`)
	for ref, want := range map[string]string{
		"#":                  "root",
		"#/$defs/a~1b":       "string",
		"#/$defs/c~0d":       "integer",
		"#/definitions/old":  "boolean",
		"#/$defs/missing":    "",
		"other.json#/$defs/": "",
		"#anchor":            "",
	} {
		got := schemawalk.Ref(root, ref)
		switch {
		case want == "root" && got != root, want == "" && got != nil:
			t.Errorf("Ref(%q) = %v, want %s", ref, got, want)
		case want != "root" && want != "" && (got == nil || got.Type != want):
			t.Errorf("Ref(%q) = %v, want the %s schema", ref, got, want)
		}
	}
}

func TestProperties(t *testing.T) {
	s := mustParse(t, `{"properties": {"z": {}, "b": {}, "a": {}, "y": {}},
		"required": ["y", "missing", "b", "y"]}`)
	if got, want := schemawalk.Properties(s), []string{"y", "b", "a", "z"}; !slices.Equal(got, want) {
		t.Errorf("Properties = %q, want %q (required in order, once, then the others sorted)", got, want)
	}
	if got := schemawalk.Properties(mustParse(t, `{}`)); len(got) != 0 {
		t.Errorf("Properties of {} = %q", got)
	}
}

// Children yields every subschema keyword, in the documented order, and stops when asked.
func TestChildren(t *testing.T) {
	s := mustParse(t, `{
		"not": {}, "if": {}, "then": {}, "else": {}, "contentSchema": {},
		"definitions": {"d": {}}, "$defs": {"b": {}, "a": {}},
		"allOf": [{}], "oneOf": [{}], "anyOf": [{}, {}],
		"additionalProperties": false, "items": {},
		"properties": {"y": {}, "x": {}},
		"prefixItems": [{}], "contains": {}, "unevaluatedItems": {},
		"patternProperties": {"^p": {}}, "propertyNames": {}, "unevaluatedProperties": {},
		"dependentSchemas": {"k": {}}
	}`)
	var got []string
	for step := range schemawalk.Children(s) {
		got = append(got, fmt.Sprintf("%s/%s/%d", step.Keyword, step.Name, step.Index))
	}
	want := []string{"properties/x/0", "properties/y/0", "items//0", "additionalProperties//0",
		"anyOf//0", "anyOf//1", "oneOf//0", "allOf//0", "$defs/a/0", "$defs/b/0", "definitions/d/0",
		"prefixItems//0", "contains//0", "unevaluatedItems//0", "patternProperties/^p/0",
		"propertyNames//0", "unevaluatedProperties//0", "dependentSchemas/k/0",
		"not//0", "if//0", "then//0", "else//0", "contentSchema//0"}
	if !slices.Equal(got, want) {
		t.Errorf("Children:\n got %q\nwant %q", got, want)
	}
	n := 0
	for range schemawalk.Children(s) {
		n++
		if n == 3 {
			break
		}
	}
	if n != 3 {
		t.Errorf("break after 3 children: %d", n)
	}
	tuple := mustParse(t, `{"items": [{"type": "string"}, {"type": "integer"}]}`)
	got = got[:0]
	for step, c := range schemawalk.Children(tuple) {
		got = append(got, fmt.Sprintf("%s[%d]=%s", step.Keyword, step.Index, c.Type))
	}
	if want := []string{"items[0]=string", "items[1]=integer"}; !slices.Equal(got, want) {
		t.Errorf("draft-07 items list: %q, want %q", got, want)
	}
	for range schemawalk.Children(nil) {
		t.Error("a nil schema has children")
	}
}

// Walk visits depth first and skips below a schema whose visit returns false; it does not
// follow $ref, so a recursive schema ends.
func TestWalk(t *testing.T) {
	s := mustParse(t, `{"properties": {"a": {"properties": {"deep": {}}}, "b": {"$ref": "#"}},
		"items": {"properties": {"c": {}}}}`)
	var seen []string
	schemawalk.Walk(s, func(path []schemawalk.Step, _ *jsonschema.Schema) bool {
		var parts []string
		for _, st := range path {
			parts = append(parts, st.Keyword+":"+st.Name)
		}
		seen = append(seen, "/"+strings.Join(parts, "/"))
		return len(path) == 0 || path[len(path)-1].Name != "a" // not below a
	})
	want := []string{"/", "/properties:a", "/properties:b", "/items:", "/items:/properties:c"}
	if !slices.Equal(seen, want) {
		t.Errorf("Walk:\n got %q\nwant %q", seen, want)
	}
}

func ExampleWalk() {
	s, _ := schemawalk.Parse([]byte(`{"type": "object", "properties": {
		"query": {"type": "string", "description": "What to look for"},
		"filters": {"type": "array", "items": {"properties": {"field": {"type": "string"}}}}}}`))
	schemawalk.Walk(s, func(path []schemawalk.Step, s *jsonschema.Schema) bool {
		if n := len(path); n > 0 && path[n-1].Keyword == "properties" {
			fmt.Printf("%*s%s: %s\n", 2*(n-1), "", path[n-1].Name, strings.Join(schemawalk.Types(s), "|"))
		}
		return true
	})
	// Output:
	// filters: array
	//     field: string
	// query: string
}
