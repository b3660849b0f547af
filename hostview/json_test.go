package hostview

import (
	"strings"
	"testing"
)

// unescapeHTML puts back <, > and & that encoding/json escaped, and nothing else.
func TestUnescapeHTML(t *testing.T) {
	for in, want := range map[string]string{
		`"\u003cb\u003e \u0026"`: `"<b> &"`,
		`"\\u003c"`:              `"\\u003c"`,
		`"\\\u003c"`:             `"\\<"`,
		`"\u00e9"`:               `"\u00e9"`,
	} {
		if got := string(unescapeHTML([]byte(in))); got != want {
			t.Errorf("unescapeHTML(%s) = %s, want %s", in, got, want)
		}
	}
}

// JSONLines writes one JSON object per line, HTML characters as encoding/json writes them.
func TestJSONLines(t *testing.T) {
	var b strings.Builder
	if err := JSONLines(&b, []map[string]int{{"a": 1}, {"b": 2}}); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != "{\"a\":1}\n{\"b\":2}\n" {
		t.Errorf("JSONLines: %q", got)
	}
}

// Output.JSON writes a nil slice as [] (scripts read a list), a value as indented JSON.
func TestOutputJSON(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{[]string(nil), "[]\n"},
		{[]string{}, "[]\n"},
		{map[string]any{"a": "<b>"}, "{\n  \"a\": \"<b>\"\n}\n"},
	} {
		var b strings.Builder
		if err := (Output{Out: &b}).JSON(c.v); err != nil || b.String() != c.want {
			t.Errorf("JSON(%#v) = %q, %v; want %q", c.v, b.String(), err, c.want)
		}
	}
}
