package hostview

import "testing"

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
