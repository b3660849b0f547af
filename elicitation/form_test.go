package elicitation_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/cordisgo/harness/elicitation"
)

const profileSchema = `{
	"type": "object",
	"properties": {
		"nickname": {"type": "string", "maxLength": 8},
		"email": {"type": "string", "format": "email", "title": "E-mail"},
		"age": {"type": "integer", "minimum": 1, "maximum": 150, "default": 30},
		"color": {"type": "string", "enum": ["r", "g"], "enumNames": ["Red", "Green"], "default": "g"},
		"size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
		"tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "maxItems": 2},
		"ok": {"type": "boolean", "description": "Agree?"},
		"api_token": {"type": "string"}
	},
	"required": ["email", "age"]
}`

func parse(t *testing.T, schema string) *elicitation.Form {
	t.Helper()
	f, err := elicitation.ParseForm(json.RawMessage(schema))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestParseForm(t *testing.T) {
	f := parse(t, profileSchema)
	var names []string
	for _, fd := range f.Fields {
		names = append(names, fd.Name)
	}
	if want := []string{"email", "age", "api_token", "color", "nickname", "ok", "size", "tags"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("order %v, want %v (required first, then by name)", names, want)
	}
	byName := map[string]elicitation.Field{}
	for _, fd := range f.Fields {
		byName[fd.Name] = fd
	}
	if fd := byName["email"]; fd.Kind != elicitation.String || fd.Format != "email" || !fd.Required || fd.Label() != "E-mail" {
		t.Errorf("email %+v", fd)
	}
	if fd := byName["color"]; fd.Kind != elicitation.Choice || fd.Default != "g" || fd.Options[0] != (elicitation.Option{Value: "r", Title: "Red"}) {
		t.Errorf("color %+v", fd)
	}
	if fd := byName["size"]; fd.Kind != elicitation.Choice || fd.Options[1].Title != "Large" {
		t.Errorf("size %+v", fd)
	}
	if fd := byName["tags"]; fd.Kind != elicitation.Multi || len(fd.Options) != 3 {
		t.Errorf("tags %+v", fd)
	}
	if !byName["api_token"].Secret || byName["nickname"].Secret {
		t.Errorf("secret detection: %+v %+v", byName["api_token"], byName["nickname"])
	}
}

func TestParseFormRefuses(t *testing.T) {
	for schema, want := range map[string]string{
		`{"type":"array"}`:                                                `type is "array", want object`,
		`{"properties":{"x":{"type":"object"}}}`:                          `property "x": type "object" is not allowed`,
		`{"properties":{"x":{"type":"array","items":{"type":"string"}}}}`: `property "x": an array's items must be an enum`,
		`{"properties":{"x":{"type":"integer","default":"no"}}}`:          `property "x": default "no": expected a number, got text`,
		`{"properties":{},"required":["y"]}`:                              `"y" is required but not a property`,
	} {
		_, err := elicitation.ParseForm(json.RawMessage(schema))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", schema, err, want)
		}
	}
}

func TestCheck(t *testing.T) {
	f := parse(t, profileSchema)
	for _, tc := range []struct {
		content map[string]any
		want    string
	}{
		{map[string]any{"email": "a@b.io", "age": 3.0}, ""},
		{map[string]any{"email": "a@b.io", "age": 3.0, "tags": []any{"a", "b"}, "ok": true, "color": "r"}, ""},
		{map[string]any{"age": 3.0}, "email: required"},
		{map[string]any{"email": "nope", "age": 3.0}, "email: expected an email address"},
		{map[string]any{"email": "a@b.io", "age": 3.5}, "age: expected a whole number, got 3.5"},
		{map[string]any{"email": "a@b.io", "age": 0.0}, "age: expected a whole number from 1 to 150, got 0"},
		{map[string]any{"email": "a@b.io", "age": 3.0, "color": "blue"}, `color: expected one of "r", "g"`},
		{map[string]any{"email": "a@b.io", "age": 3.0, "tags": []any{"a", "b", "c"}}, "tags: expected at most 2 choices, got 3"},
		{map[string]any{"email": "a@b.io", "age": 3.0, "nickname": "much too long"}, "nickname: expected at most 8 characters, got 13"},
		{map[string]any{"email": "a@b.io", "age": 3.0, "extra": 1.0}, "extra: not a field of this form"},
	} {
		err := f.Check(tc.content)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.content, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: error %v, want %q", tc.content, err, tc.want)
		}
	}
}

func TestFieldParse(t *testing.T) {
	f := parse(t, profileSchema)
	field := func(name string) *elicitation.Field {
		for i := range f.Fields {
			if f.Fields[i].Name == name {
				return &f.Fields[i]
			}
		}
		t.Fatalf("no field %s", name)
		return nil
	}
	for _, tc := range []struct {
		field, text string
		want        any
		err         string
	}{
		{"age", "42", 42.0, ""},
		{"age", "forty", nil, "age: expected a whole number from 1 to 150"},
		{"age", "", nil, ""},
		{"ok", "Y", true, ""},
		{"ok", "nah", nil, "ok: expected yes or no"},
		{"color", "green", "g", ""},
		{"color", "1", "r", ""},
		{"color", "g", "g", ""},
		{"size", "Large", "l", ""},
		{"tags", "a, c", []string{"a", "c"}, ""},
		{"tags", "a, z", nil, `"z" is not a choice`},
		{"email", "x@y.org", "x@y.org", ""},
	} {
		got, err := field(tc.field).Parse(tc.text)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %q: error %v, want %q", tc.field, tc.text, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %q: %#v, %v; want %#v", tc.field, tc.text, got, err, tc.want)
		}
	}
}

func TestDefaults(t *testing.T) {
	f := parse(t, `{"type":"object","properties":{"a":{"type":"string","default":"x"},"b":{"type":"boolean","default":false},"c":{"type":"number"}},"required":["a"]}`)
	got, err := f.Defaults()
	if err != nil || !reflect.DeepEqual(got, map[string]any{"a": "x", "b": false}) {
		t.Fatalf("defaults %v, %v", got, err)
	}
	if _, err := parse(t, profileSchema).Defaults(); err == nil || !strings.Contains(err.Error(), "without a default: email") {
		t.Fatalf("error %v", err)
	}
}
