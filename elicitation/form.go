package elicitation

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cordisgo/harness/internal/redact"
	"github.com/cordisgo/harness/internal/schemawalk"
)

// Kind is a form field's type.
type Kind string

// Field kinds. A Choice field is a string with a fixed set of values; Multi is an array of
// such values.
const (
	String  Kind = "string"
	Number  Kind = "number"
	Integer Kind = "integer"
	Boolean Kind = "boolean"
	Choice  Kind = "choice"
	Multi   Kind = "multi"
)

// Option is one value of a choice, with the title to show (the value when the schema gives
// none).
type Option struct {
	Value string `json:"value"`
	Title string `json:"title"`
}

// Field is one property of a requested schema, ready to render. It is a plain value.
type Field struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Kind        Kind   `json:"kind"`
	// Format is a string's format (email, uri, date, date-time), if any.
	Format   string `json:"format,omitempty"`
	Required bool   `json:"required,omitempty"`
	// Secret marks a value to read without echo: the schema says writeOnly or format
	// "password", or the name looks like a secret (token, password, api key, ...).
	Secret bool `json:"secret,omitempty"`
	// Options are the values of a Choice or Multi field.
	Options []Option `json:"options,omitempty"`
	// Default is the schema's default (a string, float64, bool or []string), or nil.
	Default any `json:"default,omitempty"`
	// Limits: string length, number range, items of a Multi field (nil: none).
	MinLength *int     `json:"minLength,omitempty"`
	MaxLength *int     `json:"maxLength,omitempty"`
	Minimum   *float64 `json:"minimum,omitempty"`
	Maximum   *float64 `json:"maximum,omitempty"`
	MinItems  *int     `json:"minItems,omitempty"`
	MaxItems  *int     `json:"maxItems,omitempty"`
}

// Label is the field's title, or its name when it has none.
func (f *Field) Label() string {
	if f.Title != "" {
		return f.Title
	}
	return f.Name
}

// Form is a parsed requested schema: its fields, required ones first (see ParseForm). A Form
// is immutable after ParseForm and safe for concurrent use.
type Form struct {
	Fields []Field `json:"fields"`
	schema *jsonschema.Resolved
}

// ParseForm parses a requested schema (any value that marshals to JSON: the SDK's
// RequestedSchema, a json.RawMessage, a map). A nil schema is a form without fields. Errors
// name the property and what the elicitation schema allows. Fields come in the order of the
// schema's "required" list, then the optional ones by name: the server's property order does
// not survive the SDK's decoding into a map.
func ParseForm(schema any) (*Form, error) {
	if schema == nil {
		return &Form{}, nil
	}
	raw, ok := schema.(json.RawMessage)
	if !ok {
		b, err := json.Marshal(schema)
		if err != nil {
			return nil, fmt.Errorf("requested schema: %w", err)
		}
		raw = b
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return &Form{}, nil
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("requested schema: %w", err)
	}
	if s.Type != "" && s.Type != "object" {
		return nil, fmt.Errorf("requested schema: type is %q, want object", s.Type)
	}
	f := &Form{}
	for _, r := range s.Required {
		if s.Properties[r] == nil {
			return nil, fmt.Errorf("requested schema: %q is required but not a property", r)
		}
	}
	// The required fields first, in the order of "required", then the others by name (the
	// server's property order does not survive: the SDK decodes the schema into a map).
	for _, name := range schemawalk.Properties(&s) {
		fd, err := parseField(name, s.Properties[name], slices.Contains(s.Required, name))
		if err != nil {
			return nil, fmt.Errorf("requested schema: property %q: %w", name, err)
		}
		f.Fields = append(f.Fields, fd)
	}
	var err error
	if f.schema, err = s.Resolve(nil); err != nil {
		return nil, fmt.Errorf("requested schema: %w", err)
	}
	return f, nil
}

func parseField(name string, p *jsonschema.Schema, required bool) (Field, error) {
	f := Field{Name: name, Title: p.Title, Description: p.Description, Required: required, Format: p.Format,
		MinLength: p.MinLength, MaxLength: p.MaxLength, Minimum: p.Minimum, Maximum: p.Maximum,
		MinItems: p.MinItems, MaxItems: p.MaxItems}
	f.Secret = p.WriteOnly || p.Format == "password" || redact.SecretName(name)
	switch p.Type {
	case "string":
		f.Kind = String
		if opts := options(p); opts != nil {
			f.Kind, f.Options = Choice, opts
		}
	case "number":
		f.Kind = Number
	case "integer":
		f.Kind = Integer
	case "boolean":
		f.Kind = Boolean
	case "array":
		if p.Items == nil {
			return f, errors.New("an array needs items with the choices")
		}
		f.Kind, f.Options = Multi, options(p.Items)
		if f.Options == nil {
			return f, errors.New("an array's items must be an enum (multiple choice)")
		}
	case "":
		return f, errors.New("no type (want string, number, integer, boolean or array)")
	default:
		return f, fmt.Errorf("type %q is not allowed (want string, number, integer, boolean or array)", p.Type)
	}
	if len(p.Default) > 0 {
		var d any
		if err := json.Unmarshal(p.Default, &d); err != nil {
			return f, fmt.Errorf("default: %w", err)
		}
		if d != nil {
			if err := f.check(normalize(f.Kind, d)); err != nil {
				return f, fmt.Errorf("default %s: %w", p.Default, err)
			}
			f.Default = normalize(f.Kind, d)
		}
	}
	return f, nil
}

// options returns the choices of an enum schema: enum (titles from the legacy enumNames),
// or oneOf/anyOf of {const, title}; nil when s is no enum.
func options(s *jsonschema.Schema) []Option {
	var out []Option
	switch {
	case len(s.Enum) > 0:
		names, _ := s.Extra["enumNames"].([]any)
		for i, v := range s.Enum {
			o := Option{Value: fmt.Sprint(v)}
			if i < len(names) {
				o.Title, _ = names[i].(string)
			}
			if o.Title == "" {
				o.Title = o.Value
			}
			out = append(out, o)
		}
	case len(s.OneOf) > 0 || len(s.AnyOf) > 0:
		for _, alt := range append(slices.Clone(s.OneOf), s.AnyOf...) {
			if alt == nil || alt.Const == nil {
				return nil
			}
			o := Option{Value: fmt.Sprint(*alt.Const), Title: alt.Title}
			if o.Title == "" {
				o.Title = o.Value
			}
			out = append(out, o)
		}
	}
	return out
}

// normalize turns a decoded JSON value into the field's Go type where it is one already
// (a Multi's []any of strings into []string).
func normalize(k Kind, v any) any {
	if k == Multi {
		if vs, ok := v.([]any); ok {
			out := make([]string, 0, len(vs))
			for _, x := range vs {
				s, ok := x.(string)
				if !ok {
					return v
				}
				out = append(out, s)
			}
			return out
		}
	}
	return v
}

// FieldError is an answer refused for one field: the field and what was expected, in plain
// words.
type FieldError struct {
	Field  string
	Reason string
}

func (e *FieldError) Error() string { return fmt.Sprintf("%s: %s", e.Field, e.Reason) }

// Defaults returns the answer made of every field's default (SEP-1034). It fails, naming
// them, when a required field has no default.
func (f *Form) Defaults() (map[string]any, error) {
	out := map[string]any{}
	var missing []string
	for _, fd := range f.Fields {
		switch {
		case fd.Default != nil:
			out[fd.Name] = fd.Default
		case fd.Required:
			missing = append(missing, fd.Name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("required field(s) without a default: %s", strings.Join(missing, ", "))
	}
	return out, nil
}

// Check reports whether content answers the form: every required field present, every value
// of its field's type and within its limits, no unknown field. The error is a *FieldError
// (or, for what the plain checks do not cover, the schema validator's message).
func (f *Form) Check(content map[string]any) error {
	for name := range content {
		if !slices.ContainsFunc(f.Fields, func(fd Field) bool { return fd.Name == name }) {
			return &FieldError{Field: name, Reason: "not a field of this form"}
		}
	}
	for i := range f.Fields {
		fd := &f.Fields[i]
		v, ok := content[fd.Name]
		if !ok || v == nil {
			if fd.Required {
				return &FieldError{Field: fd.Name, Reason: "required"}
			}
			continue
		}
		if err := fd.check(normalize(fd.Kind, v)); err != nil {
			return &FieldError{Field: fd.Name, Reason: err.Error()}
		}
	}
	if f.schema != nil {
		// The answer as it goes on the wire, so that the validator sees JSON types.
		b, err := json.Marshal(content)
		if err != nil {
			return err
		}
		var wire map[string]any
		if err := json.Unmarshal(b, &wire); err != nil {
			return err
		}
		if err := f.schema.Validate(wire); err != nil {
			return fmt.Errorf("does not match the requested schema: %w", err)
		}
	}
	return nil
}

var (
	emailRE = regexp.MustCompile(`^[^@\s]+@[^@\s]+\.[^@\s]+$`)
	uriRE   = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:\S+$`)
)

// check reports whether v is a valid value of the field, in plain words.
func (f *Field) check(v any) error {
	switch f.Kind {
	case String, Choice:
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("expected text, got %s", jsonKind(v))
		}
		if f.Kind == Choice {
			if !slices.ContainsFunc(f.Options, func(o Option) bool { return o.Value == s }) {
				return fmt.Errorf("expected one of %s", f.choices())
			}
			return nil
		}
		n := len([]rune(s))
		if f.MinLength != nil && n < *f.MinLength {
			return fmt.Errorf("expected at least %d characters, got %d", *f.MinLength, n)
		}
		if f.MaxLength != nil && n > *f.MaxLength {
			return fmt.Errorf("expected at most %d characters, got %d", *f.MaxLength, n)
		}
		return checkFormat(f.Format, s)
	case Number, Integer:
		x, ok := toFloat(v)
		if !ok {
			return fmt.Errorf("expected a number, got %s", jsonKind(v))
		}
		if f.Kind == Integer && x != math.Trunc(x) {
			return fmt.Errorf("expected a whole number, got %v", x)
		}
		if f.Minimum != nil && x < *f.Minimum {
			return fmt.Errorf("expected %s, got %v", f.rangeWords(), x)
		}
		if f.Maximum != nil && x > *f.Maximum {
			return fmt.Errorf("expected %s, got %v", f.rangeWords(), x)
		}
	case Boolean:
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("expected yes or no (true/false), got %s", jsonKind(v))
		}
	case Multi:
		vs, ok := v.([]string)
		if !ok {
			return fmt.Errorf("expected a list of choices, got %s", jsonKind(v))
		}
		for _, s := range vs {
			if !slices.ContainsFunc(f.Options, func(o Option) bool { return o.Value == s }) {
				return fmt.Errorf("%q is not a choice; expected some of %s", s, f.choices())
			}
		}
		if f.MinItems != nil && len(vs) < *f.MinItems {
			return fmt.Errorf("expected at least %d choices, got %d", *f.MinItems, len(vs))
		}
		if f.MaxItems != nil && len(vs) > *f.MaxItems {
			return fmt.Errorf("expected at most %d choices, got %d", *f.MaxItems, len(vs))
		}
	}
	return nil
}

func checkFormat(format, s string) error {
	var ok bool
	switch format {
	case "email":
		ok = emailRE.MatchString(s)
	case "uri":
		ok = uriRE.MatchString(s)
	case "date":
		_, err := time.Parse(time.DateOnly, s)
		ok = err == nil
	case "date-time":
		_, err := time.Parse(time.RFC3339, s)
		ok = err == nil
	default:
		return nil
	}
	if !ok {
		return errors.New("expected " + formatWords(format))
	}
	return nil
}

// formatWords names what a string of format is.
func formatWords(format string) string {
	switch format {
	case "email":
		return "an email address"
	case "uri":
		return "a URI"
	case "date":
		return "a date (YYYY-MM-DD)"
	case "date-time":
		return "a date and time (2006-01-02T15:04:05Z)"
	}
	return "text"
}

// Expects says in plain words what the field takes, with its limits: "text, 1 to 40
// characters", "an email address", "a whole number from 1 to 150", "yes or no", `one of
// "r", "g"`. Responders show it next to the field; refused answers use the same words.
func (f *Field) Expects() string {
	switch f.Kind {
	case String:
		return withLimits(formatWords(f.Format), f.Limits())
	case Number, Integer:
		return f.rangeWords()
	case Boolean:
		return "yes or no"
	case Choice:
		return "one of " + f.choices()
	case Multi:
		return withLimits("some of "+f.choices(), f.Limits())
	}
	return ""
}

// Limits words a string's length or a multiple choice's count limits ("1 to 40
// characters", "at most 2 choices"); "" when there are none or the kind has none.
func (f *Field) Limits() string {
	switch f.Kind {
	case String:
		return between(f.MinLength, f.MaxLength, "characters")
	case Multi:
		return between(f.MinItems, f.MaxItems, "choices")
	}
	return ""
}

func withLimits(what, limits string) string {
	if limits == "" {
		return what
	}
	return what + ", " + limits
}

func between(lo, hi *int, unit string) string {
	switch {
	case lo != nil && hi != nil:
		return fmt.Sprintf("%d to %d %s", *lo, *hi, unit)
	case lo != nil:
		return fmt.Sprintf("at least %d %s", *lo, unit)
	case hi != nil:
		return fmt.Sprintf("at most %d %s", *hi, unit)
	}
	return ""
}

func (f *Field) rangeWords() string {
	what := "a number"
	if f.Kind == Integer {
		what = "a whole number"
	}
	switch {
	case f.Minimum != nil && f.Maximum != nil:
		return fmt.Sprintf("%s from %v to %v", what, *f.Minimum, *f.Maximum)
	case f.Minimum != nil:
		return fmt.Sprintf("%s of at least %v", what, *f.Minimum)
	case f.Maximum != nil:
		return fmt.Sprintf("%s of at most %v", what, *f.Maximum)
	}
	return what
}

func (f *Field) choices() string {
	vs := make([]string, len(f.Options))
	for i, o := range f.Options {
		vs[i] = strconv.Quote(o.Value)
	}
	return strings.Join(vs, ", ")
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "text"
	case bool:
		return "true/false"
	case float64, float32, int, int64, json.Number:
		return "a number"
	case []any, []string:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// Parse reads text typed by a person as the field's value: numbers, yes/no (y, true, 1 …),
// a choice by its value, its title (any case) or its 1-based number, several choices
// separated by commas. Empty text means "no value" (nil, nil): the caller uses the default
// or, for a required field, asks again. The value is checked against the field's limits.
func (f *Field) Parse(text string) (any, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, nil
	}
	var v any
	switch f.Kind {
	case String:
		v = text
	case Number, Integer:
		x, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, &FieldError{Field: f.Name, Reason: "expected " + f.Expects()}
		}
		v = x
	case Boolean:
		switch strings.ToLower(text) {
		case "y", "yes", "true", "t", "1", "on":
			v = true
		case "n", "no", "false", "f", "0", "off":
			v = false
		default:
			return nil, &FieldError{Field: f.Name, Reason: "expected " + f.Expects()}
		}
	case Choice:
		o, ok := f.option(text)
		if !ok {
			return nil, &FieldError{Field: f.Name, Reason: "expected " + f.Expects()}
		}
		v = o
	case Multi:
		var vs []string
		for part := range strings.SplitSeq(text, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			o, ok := f.option(part)
			if !ok {
				return nil, &FieldError{Field: f.Name, Reason: fmt.Sprintf("%q is not a choice; expected some of %s", part, f.choices())}
			}
			vs = append(vs, o)
		}
		v = vs
	}
	if err := f.check(v); err != nil {
		return nil, &FieldError{Field: f.Name, Reason: err.Error()}
	}
	return v, nil
}

// option finds a choice by value, title (case-insensitive) or 1-based number.
func (f *Field) option(text string) (string, bool) {
	for _, o := range f.Options {
		if o.Value == text {
			return o.Value, true
		}
	}
	for _, o := range f.Options {
		if strings.EqualFold(o.Title, text) || strings.EqualFold(o.Value, text) {
			return o.Value, true
		}
	}
	if n, err := strconv.Atoi(text); err == nil && n >= 1 && n <= len(f.Options) {
		return f.Options[n-1].Value, true
	}
	return "", false
}
