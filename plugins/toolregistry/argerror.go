package toolregistry

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cordisgo/harness/internal/schemawalk"
)

// ArgumentError explains, in plain words, why a call's arguments do not match the tool's
// parameters schema. It is the Err of a [ToolError] with [CodeInvalidArgs] whose arguments
// were a JSON object, and its message is the ToolError's after "invalid arguments: ":
//
//	missing required argument "a"
//	argument "b": must be at least 2, got 1
//	argument "x": expected a number, got a string
//	unexpected argument "c"
//
// An ArgumentError is not modified after it is returned.
type ArgumentError struct {
	// Argument is the offending argument: a property name, a path for nested values
	// ("options.depth", "tags[2]"), or "" for the arguments object as a whole.
	Argument string
	// Problem is what is wrong with it ("must be at least 2, got 1").
	Problem string
	// Err is jsonschema-go's validation error.
	Err error
}

// Error renders the argument and the problem.
func (e *ArgumentError) Error() string {
	if e.Argument == "" {
		return e.Problem
	}
	return "argument " + strconv.Quote(e.Argument) + ": " + e.Problem
}

// Unwrap returns jsonschema-go's validation error.
func (e *ArgumentError) Unwrap() error { return e.Err }

// argumentError turns jsonschema-go's rejection err of the JSON object args into an
// [*ArgumentError]: the first violation found by walking sch (jsonschema-go's parsed
// schema, local $refs followed) along args, in plain words; when the walk finds none
// (keywords it does not explain: remote references, patternProperties, uniqueItems, …),
// jsonschema-go's innermost message, located at the deepest property its error chain names.
func argumentError(sch *jsonschema.Schema, args json.RawMessage, err error) *ArgumentError {
	var v any
	if sch != nil && json.Unmarshal(args, &v) == nil {
		if arg, problem, ok := explain(sch, sch, v, "", 0); ok {
			return &ArgumentError{Argument: arg, Problem: problem, Err: err}
		}
	}
	arg, msg := locate(err)
	return &ArgumentError{Argument: arg, Problem: msg, Err: err}
}

// maxExplainDepth bounds the walk (schemas and arguments are both bounded, but a schema
// may be deeper than any instance needs).
const maxExplainDepth = 32

// explain finds the first keyword of s that v violates. path is v's place in the
// arguments. ok is false when it finds no violation it can put in words.
func explain(root, s *jsonschema.Schema, v any, path string, depth int) (arg, problem string, ok bool) {
	if s == nil || depth > maxExplainDepth || s.DynamicRef != "" {
		return "", "", false
	}
	if s.Ref != "" {
		return explain(root, schemawalk.Ref(root, s.Ref), v, path, depth+1)
	}
	if schemawalk.IsFalse(s) {
		return path, "is not allowed", true
	}
	if want := schemawalk.Types(s); len(want) > 0 && !slices.ContainsFunc(want, func(t string) bool { return hasType(v, t) }) {
		return path, "expected " + typeWords(want) + ", got " + describe(v), true
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return jsonEqual(e, v) }) {
		return path, "must be one of " + jsonList(s.Enum) + ", got " + jsonText(v), true
	}
	if s.Const != nil && !jsonEqual(*s.Const, v) {
		return path, "must be " + jsonText(*s.Const) + ", got " + jsonText(v), true
	}
	if alts := slices.Concat(s.AnyOf, s.OneOf); len(alts) > 0 {
		if problem := alternativesProblem(root, alts, v, path, depth); problem != "" {
			return path, problem, true
		}
	}
	switch x := v.(type) {
	case float64:
		return path, numberProblem(s, x), numberProblem(s, x) != ""
	case string:
		return path, stringProblem(s, x), stringProblem(s, x) != ""
	case []any:
		return arrayProblem(root, s, x, path, depth)
	case map[string]any:
		return objectProblem(root, s, x, path, depth)
	}
	return "", "", false
}

// alternativesProblem explains a value that fails every alternative of an anyOf or oneOf,
// or returns "" when some alternative may accept it.
func alternativesProblem(root *jsonschema.Schema, alts []*jsonschema.Schema, v any, path string, depth int) string {
	var types []string
	for _, a := range alts {
		if _, _, failed := explain(root, a, v, path, depth+1); !failed {
			return ""
		}
		ts := schemawalk.Types(a)
		if len(ts) == 0 {
			types = nil
			break
		}
		types = append(types, ts...)
	}
	if types == nil {
		return "matches none of the " + strconv.Itoa(len(alts)) + " allowed forms"
	}
	return "expected " + typeWords(slices.Compact(types)) + ", got " + describe(v)
}

func numberProblem(s *jsonschema.Schema, x float64) string {
	got := ", got " + number(x)
	switch {
	case s.Minimum != nil && x < *s.Minimum:
		return "must be at least " + number(*s.Minimum) + got
	case s.Maximum != nil && x > *s.Maximum:
		return "must be at most " + number(*s.Maximum) + got
	case s.ExclusiveMinimum != nil && x <= *s.ExclusiveMinimum:
		return "must be greater than " + number(*s.ExclusiveMinimum) + got
	case s.ExclusiveMaximum != nil && x >= *s.ExclusiveMaximum:
		return "must be less than " + number(*s.ExclusiveMaximum) + got
	case s.MultipleOf != nil && *s.MultipleOf > 0 && math.Mod(x, *s.MultipleOf) != 0:
		return "must be a multiple of " + number(*s.MultipleOf) + got
	}
	return ""
}

func stringProblem(s *jsonschema.Schema, x string) string {
	n := utf8.RuneCountInString(x)
	switch {
	case s.MinLength != nil && n < *s.MinLength:
		return "must be at least " + count(*s.MinLength, "character") + " long, got " + strconv.Itoa(n)
	case s.MaxLength != nil && n > *s.MaxLength:
		return "must be at most " + count(*s.MaxLength, "character") + " long, got " + strconv.Itoa(n)
	case s.Pattern != "":
		if re, err := regexp.Compile(s.Pattern); err == nil && !re.MatchString(x) {
			return "must match the pattern " + strconv.Quote(s.Pattern) + ", got " + strconv.Quote(x)
		}
	}
	return ""
}

func arrayProblem(root, s *jsonschema.Schema, x []any, path string, depth int) (string, string, bool) {
	switch {
	case s.MinItems != nil && len(x) < *s.MinItems:
		return path, "must have at least " + count(*s.MinItems, "item") + ", got " + strconv.Itoa(len(x)), true
	case s.MaxItems != nil && len(x) > *s.MaxItems:
		return path, "must have at most " + count(*s.MaxItems, "item") + ", got " + strconv.Itoa(len(x)), true
	}
	if s.Items != nil && len(s.PrefixItems) == 0 {
		for i, el := range x {
			if a, p, ok := explain(root, s.Items, el, path+"["+strconv.Itoa(i)+"]", depth+1); ok {
				return a, p, true
			}
		}
	}
	return "", "", false
}

func objectProblem(root, s *jsonschema.Schema, x map[string]any, path string, depth int) (string, string, bool) {
	for _, name := range s.Required {
		if _, ok := x[name]; !ok {
			if path == "" {
				return "", "missing required argument " + strconv.Quote(name), true
			}
			return path, "missing required property " + strconv.Quote(name), true
		}
	}
	names := make([]string, 0, len(x))
	for name := range x {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		sub := s.Properties[name]
		if sub == nil {
			if len(s.PatternProperties) > 0 {
				continue // not explained: jsonschema-go's message is used
			}
			sub = s.AdditionalProperties
		}
		if sub == nil {
			continue
		}
		if schemawalk.IsFalse(sub) && s.Properties[name] == nil {
			if path == "" {
				return "", "unexpected argument " + strconv.Quote(name) + expected(s), true
			}
			return path, "unexpected property " + strconv.Quote(name) + expected(s), true
		}
		if a, p, ok := explain(root, sub, x[name], join(path, name), depth+1); ok {
			return a, p, true
		}
	}
	return "", "", false
}

// expected lists the properties an object takes, for an unexpected one.
func expected(s *jsonschema.Schema) string {
	if len(s.Properties) == 0 {
		return " (it takes none)"
	}
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, strconv.Quote(name))
	}
	slices.Sort(names)
	return " (expected " + strings.Join(names, ", ") + ")"
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// hasType reports whether v, a value as json.Unmarshal into an any makes it, is of the JSON
// type t.
func hasType(v any, t string) bool {
	switch x := v.(type) {
	case nil:
		return t == "null"
	case bool:
		return t == "boolean"
	case float64:
		return t == "number" || t == "integer" && x == math.Trunc(x) && !math.IsInf(x, 0)
	case string:
		return t == "string"
	case []any:
		return t == "array"
	case map[string]any:
		return t == "object"
	}
	return false
}

var typeArticles = map[string]string{
	"null": "null", "boolean": "a boolean", "integer": "an integer", "number": "a number",
	"string": "a string", "array": "an array", "object": "an object",
}

func typeWords(types []string) string {
	words := make([]string, len(types))
	for i, t := range types {
		if words[i] = typeArticles[t]; words[i] == "" {
			words[i] = strconv.Quote(t)
		}
	}
	if len(words) == 1 {
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// describe names v's type, and its value for a number (so that 2.5 reads as such where an
// integer is expected).
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return number(x)
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "an object"
}

func number(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func count(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 64 {
		return string(b[:60]) + " …"
	}
	return string(b)
}

func jsonList(vs []any) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = jsonText(v)
	}
	return strings.Join(out, ", ")
}

// jsonEqual compares two JSON values as jsonschema-go's enum and const do: by their JSON
// encoding, with map keys sorted by encoding/json.
func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// locate reads jsonschema-go's error chain: each level is "validating <schema>: <cause>";
// the schema of the deepest level names the property (".../properties/<name>"), the
// innermost error is the keyword's message.
func locate(err error) (arg, msg string) {
	var path []string
	for e := err; e != nil; e = errors.Unwrap(e) {
		inner := errors.Unwrap(e)
		if inner == nil {
			msg, _, _ = strings.Cut(e.Error(), "\n")
			msg = strings.TrimSuffix(msg, ":")
			break
		}
		prefix := strings.TrimSuffix(e.Error(), ": "+inner.Error())
		if ptr, ok := strings.CutPrefix(prefix, "validating "); ok {
			if names := propertyNames(ptr); names != nil {
				path = names
			}
		}
	}
	return strings.Join(path, "."), msg
}

// propertyNames returns the property names along a schema pointer ("/properties/a/properties/b"
// → a, b), or nil when it names none.
func propertyNames(ptr string) []string {
	var names []string
	parts := strings.Split(ptr, "/")
	for i := 0; i+1 < len(parts); i++ {
		if parts[i] == "properties" {
			names = append(names, strings.NewReplacer("~1", "/", "~0", "~").Replace(parts[i+1]))
			i++
		}
	}
	return names
}
