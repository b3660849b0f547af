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
