package yamlnode

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestKindAndErrorText(t *testing.T) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("a: {b: 1}\nl: [x]\nn: null\nt: true\nf: 1.5\ns: secret-value\n"), &doc); err != nil {
		t.Fatal(err)
	}
	root := doc.Content[0]
	want := []string{"a mapping", "a list", "null", "a boolean", "a number", "a string"}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if got := Kind(root.Content[i+1]); got != want[i/2] {
			t.Errorf("%s: %q, want %q", root.Content[i].Value, got, want[i/2])
		}
	}
	var v struct{ N int }
	err := yaml.Unmarshal([]byte("n: sk-live-secret\n"), &v)
	if err == nil {
		t.Fatal("decoded")
	}
	if text := ErrorText(err); strings.Contains(text, "sk-live-secret") || !strings.Contains(text, "line 1") {
		t.Errorf("ErrorText = %q: want the line, not the value", text)
	}
}
