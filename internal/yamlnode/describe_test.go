package yamlnode

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The describers say what kind of value was found; Value and Describe show short scalars,
// never a long string; ValueKind and Kind show no value at all.
func TestDescribers(t *testing.T) {
	long := strings.Repeat("x", 41)
	for _, c := range []struct {
		v           any
		value, kind string
	}{
		{nil, "null", "null"},
		{"", "an empty string", "a string"},
		{"yes", `string "yes"`, "a string"},
		{long, "a string of 41 bytes", "a string"},
		{true, "boolean true", "a boolean"},
		{int64(5), "integer 5", "a number"},
		{8080.0, "number 8080", "a number"},
		{[]any{1}, "a list", "a list"},
		{map[string]any{}, "a map", "a map"},
	} {
		if got := Value(c.v); got != c.value {
			t.Errorf("Value(%#v) = %q, want %q", c.v, got, c.value)
		}
		if got := ValueKind(c.v); got != c.kind {
			t.Errorf("ValueKind(%#v) = %q, want %q", c.v, got, c.kind)
		}
	}
	for doc, want := range map[string]string{
		"a: 1": "a map", "[1]": "a list", "~": "null", "yes": `string "yes"`, "true": "boolean true",
		"5": "integer 5", "1.5": "number 1.5", long: "a string of 41 bytes",
	} {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
			t.Fatal(err)
		}
		if got := Describe(n.Content[0]); got != want {
			t.Errorf("Describe(%q) = %q, want %q", doc, got, want)
		}
	}
}
