package modeltest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestSplitters checks the splitters against json.Unmarshal on valid JSON: escapes, quotes
// after backslashes, nesting, white space, numbers and literals, repeated keys.
func TestSplitters(t *testing.T) {
	objects := []string{
		`{}`,
		` { "a" : 1 , "b":"x" } `,
		`{"a":{"b":[1,{"c":"}"}]},"d":[],"e":null,"f":true,"g":-1.5e3}`,
		`{"q\"k":"a \\\" b","k\\":"\\\\","\u00e9t\u00e9":"caf\u00e9","n":"\n\t"}`,
		`{"a":1,"a":2}`,
		"{\n\t\"x\" :\r\n [ \"]\" , \"\\\\\" ] ,\"y\":false}",
		`{"s":"` + strings.Repeat(`\\\"`, 50) + `","t":"é ✓"}`,
	}
	for _, doc := range objects {
		var want map[string]json.RawMessage
		if err := json.Unmarshal([]byte(doc), &want); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		got := members([]byte(doc))
		keys := slices.Sorted(maps.Keys(want))
		if gotKeys := slices.Sorted(maps.Keys(got)); !slices.Equal(gotKeys, keys) {
			t.Errorf("%s: keys %q, want %q", doc, gotKeys, keys)
			continue
		}
		for _, k := range keys {
			sameRaw(t, doc+" member "+k, got[k], want[k])
			if kind(want[k]) == '"' {
				var s string
				_ = json.Unmarshal(want[k], &s)
				if u := unquote(want[k]); u != s {
					t.Errorf("unquote(%s) = %q, want %q", want[k], u, s)
				}
			}
		}
	}
	arrays := []string{`[]`, ` [ 1 , "a,]" , {"b":[2]} , null ] `, `["\\",true,[[]],-0.1]`}
	for _, doc := range arrays {
		var want []json.RawMessage
		if err := json.Unmarshal([]byte(doc), &want); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		got := elements([]byte(doc))
		if len(got) != len(want) {
			t.Errorf("%s: %d elements, want %d", doc, len(got), len(want))
			continue
		}
		for i := range want {
			sameRaw(t, fmt.Sprintf("%s element %d", doc, i), got[i], want[i])
		}
	}
}

func sameRaw(t *testing.T, what string, got, want json.RawMessage) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Errorf("%s: %s, want %s", what, got, want)
	}
}

// TestCommonPrefix checks the block-wise comparison at and around its block boundaries.
func TestCommonPrefix(t *testing.T) {
	a := bytes.Repeat([]byte("abcdefgh"), 200)
	for _, n := range []int{0, 1, 255, 256, 257, 511, 512, 1000, len(a)} {
		if got := CommonPrefix(a, a[:n]); got != n {
			t.Errorf("prefix of length %d: %d", n, got)
		}
		b := bytes.Clone(a)
		if n < len(b) {
			b[n] = 'X'
			if got := CommonPrefix(a, b); got != n {
				t.Errorf("difference at %d: %d", n, got)
			}
		}
	}
}
