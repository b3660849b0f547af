package ctx

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/cordisgo/harness/internal/suggest"
)

// Defaulter is implemented by a configuration type whose zero value is not its default:
// Default is called on the zero value before decoding, so decoded keys override defaults
// (nested objects merge key by key). Implement it on the pointer:
//
//	var _ ctx.Defaulter = (*Config)(nil)
type Defaulter interface {
	// Default sets the defaults.
	Default()
}

// Validator is implemented by a configuration type that checks itself after decoding.
// Validate returns nil or the problems found, as [*ConfigError] values (collect them with
// [Problems]); any other error is reported as a problem of the whole value.
//
//	var _ ctx.Validator = Config{}
type Validator interface {
	// Validate checks the decoded configuration.
	Validate() error
}

// Decode decodes raw as a configuration of type C, the way a mount does: C's defaults
// ([Defaulter]), then the keys of raw decoded strictly ([DecodeInto]), then C's
// [Validator]. raw may be nil (defaults only), a value of type C or *C (used as is, still
// validated), JSON bytes ([]byte, [json.RawMessage]) or a value made of maps, lists and
// scalars, as decoded from YAML or JSON. Problems are [*ConfigError] values, several
// joined in order.
func Decode[C any](raw any) (C, error) {
	var cfg C
	if d, ok := any(&cfg).(Defaulter); ok {
		d.Default()
	}
	switch v := raw.(type) {
	case nil:
	case C:
		cfg = v
	case *C:
		if v != nil {
			cfg = *v
		}
	default:
		if err := DecodeInto(raw, &cfg); err != nil {
			var zero C
			return zero, err
		}
	}
	if err := validate(&cfg); err != nil {
		var zero C
		return zero, err
	}
	return cfg, nil
}

// validate runs the Validator of *p or of the value.
func validate[C any](p *C) error {
	var err error
	switch v := any(p).(type) {
	case Validator:
		err = v.Validate()
	default:
		if v, ok := any(*p).(Validator); ok {
			err = v.Validate()
		}
	}
	if err == nil {
		return nil
	}
	return JoinConfigErrors(ConfigErrors(err))
}

// DecodeInto decodes raw strictly into dst, a non-nil pointer, over what dst already holds
// (so call it after setting defaults). raw is JSON bytes or a value made of maps, lists
// and scalars. Keys match the json tags exactly: an unknown key, a key in the wrong case
// ("Command" for "command") and a value of the wrong kind are problems, all of them
// reported at once, in key order, each naming its key path and what was expected, never
// the value. It does not run Default or Validate.
func DecodeInto(raw any, dst any) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return &ConfigError{Msg: fmt.Sprintf("cannot decode into %T: not a non-nil pointer", dst)}
	}
	var b []byte
	switch v := raw.(type) {
	case json.RawMessage:
		b = v
	case []byte:
		b = v
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			return &ConfigError{Msg: "not a plain value of maps, lists and scalars", Err: err}
		}
	}
	if t := bytes.TrimSpace(b); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return &ConfigError{Msg: "not valid JSON: " + strings.TrimPrefix(err.Error(), "json: "), Err: err}
	}
	if rest := bytes.TrimSpace(b[dec.InputOffset():]); len(rest) > 0 {
		return &ConfigError{Msg: "not valid JSON: data after the value"}
	}
	var p Problems
	checkValue(&p, tree, rv.Type().Elem(), "")
	if p.Len() > 0 {
		return p.Err()
	}
	strict := json.NewDecoder(bytes.NewReader(b))
	strict.DisallowUnknownFields()
	if err := strict.Decode(dst); err != nil {
		// checkValue accepts what the decoder accepts; this is a value out of range or a
		// custom unmarshaler's refusal.
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return &ConfigError{Key: te.Field, Msg: "expected " + kindWord(te.Type) + ", got " + te.Value, Err: err}
		}
		return &ConfigError{Msg: strings.TrimPrefix(err.Error(), "json: "), Err: err}
	}
	return nil
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

// checkValue records every problem of v (decoded with UseNumber) against t at key path.
func checkValue(p *Problems, v any, t reflect.Type, key string) {
	if v == nil {
		return // null leaves the field as it is, as encoding/json does
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return // the type decodes itself; the decoder reports its errors
	}
	bad := func() { p.Add(key, "expected %s, got %s", kindWord(t), jsonKind(v)) }
	switch t.Kind() {
	case reflect.Interface:
	case reflect.String:
		if _, ok := v.(string); !ok {
			bad()
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			bad()
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := v.(json.Number)
		if !ok {
			bad()
			return
		}
		if _, err := n.Int64(); err == nil {
			return
		}
		if _, err := strconv.ParseUint(n.String(), 10, 64); err == nil {
			return // a large unsigned value: the decoder checks the range
		}
		p.Add(key, "expected %s, got a number that is not an integer or is out of range", kindWord(t))
	case reflect.Float32, reflect.Float64:
		if _, ok := v.(json.Number); !ok {
			bad()
		}
	case reflect.Slice, reflect.Array:
		list, ok := v.([]any)
		if !ok {
			if t.Elem().Kind() == reflect.Uint8 {
				return // []byte decodes from a base64 string
			}
			bad()
			return
		}
		for i, e := range list {
			checkValue(p, e, t.Elem(), fmt.Sprintf("%s[%d]", key, i))
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			bad()
			return
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			checkValue(p, m[k], t.Elem(), JoinKey(key, k))
		}
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			bad()
			return
		}
		fields := jsonFields(t)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			kp := JoinKey(key, k)
			ft, ok := fields[k]
			if !ok {
				p.Add(kp, "%s", unknownKey(k, fields))
				continue
			}
			checkValue(p, m[k], ft, kp)
		}
	}
}

// unknownKey words an unknown key, suggesting the key it was probably meant to be.
func unknownKey(k string, fields map[string]reflect.Type) string {
	names := slices.Sorted(maps.Keys(fields))
	for _, name := range names { // a key in the wrong case, however long
		if strings.EqualFold(name, k) {
			return fmt.Sprintf("unknown key (did you mean %q?)", name)
		}
	}
	if best := suggest.Closest(k, names, suggest.Options{Max: 1}); len(best) > 0 {
		return "unknown key (" + suggest.Phrase(best) + ")"
	}
	if len(names) > 12 {
		return "unknown key"
	}
	return "unknown key: expected one of " + strings.Join(names, ", ")
}

// jsonKind names the kind of a decoded JSON value, never the value.
func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case []any:
		return "list"
	case map[string]any:
		return "object"
	}
	return "null"
}

// KindName is the name configuration documents use for the values of type t: "string",
// "boolean", "integer", "number", "list of …", "map of …" (the elements' name) or "object"; a
// pointer type is named as the type it points to. Decode's messages and the generated
// configuration reference both speak of types this way.
func KindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return KindName(t.Elem())
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "list of " + KindName(t.Elem())
	case reflect.Map:
		return "map of " + KindName(t.Elem())
	}
	return "object"
}

// kindWord is KindName without the elements, with an article, as a message says what it
// expected: "a string", "a boolean (true or false)", "an integer", "a list", ….
func kindWord(t reflect.Type) string {
	name, _, _ := strings.Cut(KindName(t), " of ")
	switch name {
	case "boolean":
		return "a boolean (true or false)"
	case "integer", "object":
		return "an " + name
	}
	return "a " + name
}

// jsonFields maps the JSON names of t's fields (embedded structs flattened) to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := make(map[string]reflect.Type, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				maps.Copy(out, jsonFields(ft))
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}
