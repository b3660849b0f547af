package yamlnode

import (
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestSyntaxErrorLine: the line of a syntax error is the broken line, for documents
// broken in the ways people break them.
func TestSyntaxErrorLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  string
		line int
	}{
		{"flow mapping not closed", "plugins:\n  a:\n    use: x\n    config: {a: 1\n  b:\n    use: y\n", 4},
		{"flow sequence not closed", "plugins:\n  a: [1, 2\n  b: 3\nc: 4\n", 2},
		{"key indented by one", "plugins:\n  a:\n    use: x\n   bad: 1\n  b: 2\n", 4},
		{"quote not closed", "plugins:\n  a:\n    use: \"x\n  b:\n    use: y\n", 3},
		{"tab", "plugins:\n  a:\n    use: x\n\tb: 1\n", 4},
		{"two colons", "plugins:\n  a: x: y\n", 2},
		{"map after a list", "plugins:\n  - a\n  b: 1\n", 3},
		{"key indented under a scalar", "a: 1\nb: 2\n  c: 3\n", 3},
		{"single quote not closed", "servers:\n  x:\n    command: 'abc\n    args: []\n", 3},
		{"list after a map", "a: 1\n- b\n", 2},
		{"first line", "a: [\n", 1},
	} {
		var n yaml.Node
		err := yaml.Unmarshal([]byte(tc.doc), &n)
		if err == nil {
			t.Fatalf("%s: parsed", tc.name)
		}
		if line, text := SyntaxError([]byte(tc.doc), err); line != tc.line || text == "" {
			t.Errorf("%s: line %d (%q), want %d; yaml.v3 said %v", tc.name, line, text, tc.line, err)
		}
	}
}
