// Package schemawalk is the module's one walker of JSON schemas, in the form
// github.com/google/jsonschema-go parses them (*jsonschema.Schema): which subschemas a
// schema has and in which order ([Children], [Walk]), what a local $ref names ([Ref]),
// the types a schema allows ([Types]), the schema false ([IsFalse]), and the order a
// schema's properties are presented in ([Properties]).
//
// Each reader of schemas keeps only its own meaning and asks this package the rest: the
// tool registry's fast argument check (internal/jsoncheck) and its plain-words rejection,
// PTC's TypeScript declarations, the elicitation form's fields, and the reference the
// tool-search index's one-pass parameter text is tested against.
//
// Every function only reads the schemas it is given; they are safe for concurrent use on
// schemas nobody modifies.
package schemawalk

import (
	"encoding/json"
	"iter"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Parse reads raw, a JSON schema (an object, true or false), into jsonschema-go's form:
// true is the empty schema, false is {"not": {}} ([IsFalse]).
func Parse(raw []byte) (*jsonschema.Schema, error) {
	s := new(jsonschema.Schema)
	if err := json.Unmarshal(raw, s); err != nil {
		return nil, err
	}
	return s, nil
}

// Types returns the JSON types s allows: "type" as a string or as a list; nil when s
// does not say (any type).
func Types(s *jsonschema.Schema) []string {
	if s.Type != "" {
		return []string{s.Type}
	}
	return s.Types
}

// IsFalse reports whether s is the schema false, which accepts nothing (jsonschema-go
// parses false as {"not": {}}).
func IsFalse(s *jsonschema.Schema) bool {
	if s == nil || s.Not == nil || !reflect.ValueOf(*s.Not).IsZero() {
		return false
	}
	rest := *s
	rest.Not = nil
	return reflect.ValueOf(rest).IsZero()
}

// Ref returns the schema the local reference ref names within root: "#" (root itself),
// "#/$defs/NAME" or "#/definitions/NAME", with JSON Pointer's escapes (~1 for "/", ~0 for
// "~") decoded. It returns nil for any other reference (remote, anchors, deeper pointers)
// and for a name root does not define.
func Ref(root *jsonschema.Schema, ref string) *jsonschema.Schema {
	unescape := strings.NewReplacer("~1", "/", "~0", "~").Replace
	switch {
	case ref == "#":
		return root
	case strings.HasPrefix(ref, "#/$defs/"):
		return root.Defs[unescape(strings.TrimPrefix(ref, "#/$defs/"))]
	case strings.HasPrefix(ref, "#/definitions/"):
		return root.Definitions[unescape(strings.TrimPrefix(ref, "#/definitions/"))]
	}
	return nil
}

// Properties returns the names of s's properties in the order they are presented (a
// form's fields, a declaration's members): the required ones in the order of "required"
// (each once, only those s defines), then the others sorted. A property whose schema is
// nil is left out.
func Properties(s *jsonschema.Schema) []string {
	out := make([]string, 0, len(s.Properties))
	for _, r := range s.Required {
		if s.Properties[r] != nil && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	required := len(out)
	for name, p := range s.Properties {
		if p != nil && !slices.Contains(out[:required], name) {
			out = append(out, name)
		}
	}
	slices.Sort(out[required:])
	return out
}

// A Step is the place of a subschema in its parent: the keyword that holds it, the
// property or definition name for the keywords that map names to schemas, and the
// position for those that list schemas (anyOf, prefixItems, items as a draft-07 list, …).
type Step struct {
	Keyword string
	Name    string
	Index   int
}

// Children yields the schemas directly below s with their steps, in a fixed order:
// properties (by name), items (a schema, or draft-07's list), additionalProperties,
// anyOf, oneOf, allOf, $defs and definitions (by name) first, as the readers of tool
// schemas meet them; then prefixItems, additionalItems, contains, unevaluatedItems,
// patternProperties (by pattern), propertyNames, unevaluatedProperties, dependentSchemas
// and draft-07's schema dependencies (by name), not, if, then, else and contentSchema.
// It does not follow $ref ([Ref] does). A nil s has no children.
func Children(s *jsonschema.Schema) iter.Seq2[Step, *jsonschema.Schema] {
	return func(yield func(Step, *jsonschema.Schema) bool) {
		if s == nil {
			return
		}
		one := func(kw string, c *jsonschema.Schema) bool {
			return c == nil || yield(Step{Keyword: kw}, c)
		}
		list := func(kw string, cs []*jsonschema.Schema) bool {
			for i, c := range cs {
				if c != nil && !yield(Step{Keyword: kw, Index: i}, c) {
					return false
				}
			}
			return true
		}
		named := func(kw string, m map[string]*jsonschema.Schema) bool {
			for _, name := range slices.Sorted(maps.Keys(m)) {
				if c := m[name]; c != nil && !yield(Step{Keyword: kw, Name: name}, c) {
					return false
				}
			}
			return true
		}
		_ = named("properties", s.Properties) &&
			one("items", s.Items) && list("items", s.ItemsArray) &&
			one("additionalProperties", s.AdditionalProperties) &&
			list("anyOf", s.AnyOf) && list("oneOf", s.OneOf) && list("allOf", s.AllOf) &&
			named("$defs", s.Defs) && named("definitions", s.Definitions) &&
			list("prefixItems", s.PrefixItems) && one("additionalItems", s.AdditionalItems) &&
			one("contains", s.Contains) && one("unevaluatedItems", s.UnevaluatedItems) &&
			named("patternProperties", s.PatternProperties) && one("propertyNames", s.PropertyNames) &&
			one("unevaluatedProperties", s.UnevaluatedProperties) &&
			named("dependentSchemas", s.DependentSchemas) && named("dependencies", s.DependencySchemas) &&
			one("not", s.Not) && one("if", s.If) && one("then", s.Then) && one("else", s.Else) &&
			one("contentSchema", s.ContentSchema)
	}
}

// Walk calls visit for root (with an empty path) and, depth first in [Children]'s order,
// for every schema below a schema whose visit returned true; path holds the steps from
// root, and is reused: copy it to keep it. It does not follow $ref, so it ends on any
// schema jsonschema-go parses (a parsed schema is a tree).
func Walk(root *jsonschema.Schema, visit func(path []Step, s *jsonschema.Schema) bool) {
	var walk func(path []Step, s *jsonschema.Schema)
	walk = func(path []Step, s *jsonschema.Schema) {
		if !visit(path, s) {
			return
		}
		for step, c := range Children(s) {
			walk(append(path, step), c)
		}
	}
	if root != nil {
		walk(nil, root)
	}
}
