package jsoncheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cordisgo/harness/internal/schemawalk"
)

// Schema is a compiled JSON schema. jsonschema-go's resolved form is the authority: it
// decides every instance the fast checker does not accept and explains every rejection.
// The fast checker is built when each keyword the schema uses, at every level, is one it
// implements (the common shape of tool schemas: types, properties, required, additional
// properties, items, enums, string and number bounds); it accepts exactly the instances
// jsonschema-go accepts (FuzzSchemaCheck compares the two) and walks the decoded value
// directly instead of through reflection, about an order of magnitude faster.
//
// With a fast checker, the resolved form is dropped after registration and resolved again
// from raw the first time an instance needs it (one that is invalid, in practice): it is
// several kilobytes per tool, and a host with many servers registers hundreds of tools.
//
// A schema is safe for concurrent use.
type Schema struct {
	raw  json.RawMessage // as registered; retained by the tool's Info anyway
	fast *checkNode      // nil: every instance goes to the resolved form

	once sync.Once
	rs   *jsonschema.Resolved
}

// newSchema returns the compiled form of raw, which parsed as s (of a draft Compile
// accepts) and resolved as rs.
func newSchema(raw json.RawMessage, s *jsonschema.Schema, rs *jsonschema.Resolved) *Schema {
	out := &Schema{raw: raw, fast: buildCheck(s, 0)}
	if out.fast == nil {
		out.once.Do(func() { out.rs = rs })
	}
	return out
}

// Resolved returns jsonschema-go's form of the schema, resolving it again if it was
// dropped; nil only if that fails, which it did not at registration.
func (s *Schema) Resolved() *jsonschema.Resolved {
	s.once.Do(func() {
		sc := new(jsonschema.Schema)
		if json.Unmarshal(s.raw, sc) == nil {
			s.rs, _ = sc.Resolve(nil)
		}
	})
	return s.rs
}

// Parsed returns the schema as jsonschema-go parsed it (the root of its resolved form), for
// explaining a rejection; nil only if it can no longer be resolved.
func (s *Schema) Parsed() *jsonschema.Schema {
	if rs := s.Resolved(); rs != nil {
		return rs.Schema()
	}
	return nil
}

// errUnresolvable reports a schema that resolved at registration but not later.
var errUnresolvable = errors.New("the schema could not be resolved again")

// acceptsRaw reports whether the JSON text raw is shown valid by the fast checker without
// decoding it; false leaves the decision to Validate.
func (s *Schema) acceptsRaw(raw []byte) bool {
	return s.fast != nil && s.fast.acceptsRaw(raw)
}

// ValidateText validates the JSON text raw: the fast scan first; else the value decoded by
// the single-pass decoder; else encoding/json's decoding, which also reports invalid JSON.
func (s *Schema) ValidateText(raw []byte) error {
	if s.acceptsRaw(raw) {
		return nil
	}
	if v, ok := decodeJSON(raw); ok {
		return s.Validate(v)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return fmt.Errorf("not valid JSON: %w", err)
	}
	return s.Validate(v)
}

// Validate validates v, a value as json.Unmarshal into an any produces it.
func (s *Schema) Validate(v any) error {
	if s.fast != nil && s.fast.accepts(v) {
		return nil
	}
	rs := s.Resolved()
	if rs == nil {
		return errUnresolvable
	}
	return rs.Validate(v)
}

// JSON types as a bit set; typeInteger is a number with no fractional part.
const (
	typeNull uint8 = 1 << iota
	typeBoolean
	typeInteger
	typeNumber
	typeString
	typeArray
	typeObject
)

var typeBits = map[string]uint8{
	"null": typeNull, "boolean": typeBoolean, "integer": typeInteger, "number": typeNumber | typeInteger,
	"string": typeString, "array": typeArray, "object": typeObject,
}

// checkNode is one schema of the subset the fast checker implements.
type checkNode struct {
	types uint8 // 0: any type

	enum    []any // only strings, booleans, float64 and nil
	hasEnum bool
	konst   any
	hasKon  bool

	minLen, maxLen int // -1: unbounded
	pattern        *regexp.Regexp

	multipleOf, minimum, maximum, exclusiveMin, exclusiveMax *float64

	minItems, maxItems int // -1: unbounded
	items              *checkNode

	props        map[string]*checkNode
	required     []string
	additional   *checkNode
	noAdditional bool // additionalProperties: false
}

// maxCheckDepth bounds the schemas the fast checker is built for; deeper ones use the
// reflective validator only.
const maxCheckDepth = 32

// buildCheck returns the fast checker of s, or nil when s uses a keyword outside the subset.
// Keywords are cleared from a copy of s as they are handled; anything left over (including
// fields a newer jsonschema-go adds) means the subset does not cover s.
func buildCheck(s *jsonschema.Schema, depth int) *checkNode {
	if s == nil || depth > maxCheckDepth {
		return nil
	}
	rest := *s
	n := &checkNode{minLen: -1, maxLen: -1, minItems: -1, maxItems: -1}

	// Annotations: no effect on validation. $defs are only reachable through $ref, which
	// is not in the subset.
	rest.ID, rest.Schema, rest.Comment, rest.Title, rest.Description = "", "", "", "", ""
	rest.Default, rest.Deprecated, rest.ReadOnly, rest.WriteOnly, rest.Examples = nil, false, false, false, nil
	rest.ContentEncoding, rest.ContentMediaType, rest.Format = "", "", ""
	rest.Extra, rest.PropertyOrder, rest.Defs, rest.Definitions = nil, nil, nil, nil

	if s.Type != "" {
		n.types = typeBits[s.Type]
		if n.types == 0 {
			return nil
		}
	}
	for _, t := range s.Types {
		b := typeBits[t]
		if b == 0 {
			return nil
		}
		n.types |= b
	}
	if s.Types != nil && n.types == 0 {
		return nil // "type": [] accepts nothing
	}
	rest.Type, rest.Types = "", nil

	if s.Enum != nil {
		for _, e := range s.Enum {
			if !scalar(e) {
				return nil
			}
		}
		n.enum, n.hasEnum = s.Enum, true
	}
	if s.Const != nil {
		if !scalar(*s.Const) {
			return nil
		}
		n.konst, n.hasKon = *s.Const, true
	}
	rest.Enum, rest.Const = nil, nil

	var ok bool
	if n.minLen, ok = bound(s.MinLength); !ok {
		return nil
	}
	if n.maxLen, ok = bound(s.MaxLength); !ok {
		return nil
	}
	if s.Pattern != "" {
		re, err := regexp.Compile(s.Pattern)
		if err != nil {
			return nil
		}
		n.pattern = re
	}
	rest.MinLength, rest.MaxLength, rest.Pattern = nil, nil, ""

	if s.MultipleOf != nil && *s.MultipleOf == 0 {
		return nil
	}
	n.multipleOf, n.minimum, n.maximum = s.MultipleOf, s.Minimum, s.Maximum
	n.exclusiveMin, n.exclusiveMax = s.ExclusiveMinimum, s.ExclusiveMaximum
	rest.MultipleOf, rest.Minimum, rest.Maximum, rest.ExclusiveMinimum, rest.ExclusiveMaximum = nil, nil, nil, nil, nil

	if n.minItems, ok = bound(s.MinItems); !ok {
		return nil
	}
	if n.maxItems, ok = bound(s.MaxItems); !ok {
		return nil
	}
	if s.Items != nil {
		if n.items = buildCheck(s.Items, depth+1); n.items == nil {
			return nil
		}
	}
	rest.MinItems, rest.MaxItems, rest.Items = nil, nil, nil

	if s.Properties != nil {
		n.props = make(map[string]*checkNode, len(s.Properties))
		for name, ps := range s.Properties {
			c := buildCheck(ps, depth+1)
			if c == nil {
				return nil
			}
			n.props[name] = c
		}
	}
	n.required = s.Required
	if a := s.AdditionalProperties; a != nil {
		if schemawalk.IsFalse(a) {
			n.noAdditional = true
		} else if n.additional = buildCheck(a, depth+1); n.additional == nil {
			return nil
		}
	}
	rest.Properties, rest.Required, rest.AdditionalProperties = nil, nil, nil

	if !reflect.ValueOf(rest).IsZero() {
		return nil
	}
	return n
}

// bound returns a length bound, -1 for none; a negative bound is not in the subset.
func bound(p *int) (int, bool) {
	if p == nil {
		return -1, true
	}
	return *p, *p >= 0
}

// scalar reports whether v is a JSON scalar as json.Unmarshal decodes it.
func scalar(v any) bool {
	switch v.(type) {
	case nil, string, bool, float64:
		return true
	}
	return false
}

// typeOf returns the type bit of v; an integral float64 is an integer.
func typeOf(v any) uint8 {
	switch x := v.(type) {
	case nil:
		return typeNull
	case bool:
		return typeBoolean
	case float64:
		return floatType(x)
	case string:
		return typeString
	case []any:
		return typeArray
	case map[string]any:
		return typeObject
	}
	return 0
}

// floatType returns the type bit of a number: integer when it has no fractional part.
func floatType(f float64) uint8 {
	if _, frac := math.Modf(f); frac == 0 {
		return typeInteger
	}
	return typeNumber
}

// accepts reports whether v is valid against n. False means "not shown valid": the caller
// asks jsonschema-go, which decides and explains.
func (n *checkNode) accepts(v any) bool {
	t := typeOf(v)
	if t == 0 || n.types != 0 && n.types&t == 0 {
		return false
	}
	if !n.enumConst(func(e any) bool { return e == v }) {
		return false
	}
	switch x := v.(type) {
	case string:
		if n.minLen >= 0 || n.maxLen >= 0 {
			c := utf8.RuneCountInString(x)
			if n.minLen >= 0 && c < n.minLen || n.maxLen >= 0 && c > n.maxLen {
				return false
			}
		}
		if n.pattern != nil && !n.pattern.MatchString(x) {
			return false
		}
	case float64:
		return n.number(x)
	case []any:
		if n.minItems >= 0 && len(x) < n.minItems || n.maxItems >= 0 && len(x) > n.maxItems {
			return false
		}
		if n.items != nil {
			for _, e := range x {
				if !n.items.accepts(e) {
					return false
				}
			}
		}
	case map[string]any:
		return n.object(x)
	}
	return true
}

// enumConst reports whether a value passes n's enum and const, eq telling whether a decoded
// JSON scalar of them equals the value. (eq does not escape: callers pass closures over
// unboxed values without allocating.)
func (n *checkNode) enumConst(eq func(any) bool) bool {
	if n.hasEnum && !slices.ContainsFunc(n.enum, eq) {
		return false
	}
	return !n.hasKon || eq(n.konst)
}

func (n *checkNode) number(x float64) bool {
	if m := n.multipleOf; m != nil {
		if _, f := math.Modf(x / *m); f != 0 {
			return false
		}
	}
	return (n.minimum == nil || x >= *n.minimum) && (n.maximum == nil || x <= *n.maximum) &&
		(n.exclusiveMin == nil || x > *n.exclusiveMin) && (n.exclusiveMax == nil || x < *n.exclusiveMax)
}

func (n *checkNode) object(x map[string]any) bool {
	for _, r := range n.required {
		if _, ok := x[r]; !ok {
			return false
		}
	}
	if n.additional == nil && !n.noAdditional {
		// Only the named properties are checked: walk the shorter of the two.
		if len(n.props) < len(x) {
			for name, c := range n.props {
				if pv, ok := x[name]; ok && !c.accepts(pv) {
					return false
				}
			}
			return true
		}
	}
	for name, pv := range x {
		c, ok := n.props[name]
		switch {
		case ok:
		case n.noAdditional:
			return false
		case n.additional != nil:
			c = n.additional
		default:
			continue
		}
		if !c.accepts(pv) {
			return false
		}
	}
	return true
}

// SupportedDraft reports whether Compile accepts a schema whose $schema is uri: none
// (""), draft 2020-12 or draft-07.
func SupportedDraft(uri string) bool {
	switch uri {
	case "", "https://json-schema.org/draft/2020-12/schema",
		"http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft-07/schema#":
		return true
	}
	return false
}

// Compile parses and resolves a JSON schema. trivial reports a schema that accepts
// every JSON object (type object, annotations only), for which validation can be skipped
// once the arguments are known to be an object.
func Compile(raw json.RawMessage) (out *Schema, trivial bool, err error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return nil, false, fmt.Errorf("not a JSON object: %w", err)
	}
	s := new(jsonschema.Schema)
	if err := json.Unmarshal(raw, s); err != nil {
		return nil, false, err
	}
	if !SupportedDraft(s.Schema) {
		return nil, false, fmt.Errorf("unsupported $schema %q (draft 2020-12 and draft-07 are supported)", s.Schema)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, false, err
	}
	out = newSchema(raw, s, rs)
	trivial = true
	for k, v := range keys {
		v = bytes.TrimSpace(v)
		switch k {
		case "title", "description", "$schema", "$comment", "examples":
		case "type":
			trivial = trivial && string(v) == `"object"`
		case "properties": // {"type":"object","properties":{}}, as SDKs emit for no arguments
			trivial = trivial && string(v) == "{}"
		case "required":
			trivial = trivial && string(v) == "[]"
		case "additionalProperties":
			trivial = trivial && string(v) == "true"
		default:
			trivial = false
		}
	}
	return out, trivial && len(keys) > 0 && keys["type"] != nil, nil
}
