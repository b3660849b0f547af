package mcpmanager

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSetEnabledInFile(t *testing.T) {
	const doc = `# MCP servers of this project
servers:
  # the first one
  alpha:
    transport: stdio   # a comment that stays
    command: alpha-server
  beta:
    enabled: true
    transport: stdio
    command: beta-server
  gamma: {transport: stdio, command: gamma-server}
  delta: {enabled: false, transport: stdio, command: delta-server}
`
	// Each case changes one line of doc (from → to), and nothing else.
	cases := []struct {
		name     string
		enabled  bool
		from, to string
	}{
		{"alpha", false, "  alpha:\n", "  alpha:\n    enabled: false\n"},
		{"beta", false, "    enabled: true\n", "    enabled: false\n"},
		{"gamma", false, "gamma: {transport", "gamma: {enabled: false, transport"},
		{"delta", true, "delta: {enabled: false", "delta: {enabled: true"},
		{"beta", true, "", ""}, // already so: the file is not written
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.from != "" && strings.Count(doc, c.from) != 1 {
				t.Fatalf("%q is not one place in the document", c.from)
			}
			path := writeSettings(t, "mcp-servers.yaml", doc, 0o640)
			changed, err := SetEnabledInFile(path, c.name, c.enabled)
			if err != nil || changed != (c.from != "") {
				t.Fatalf("SetEnabledInFile: changed %v, err %v", changed, err)
			}
			want := strings.Replace(doc, c.from, c.to, 1)
			got, _ := os.ReadFile(path)
			if string(got) != want {
				t.Fatalf("file now:\n%s\nwant:\n%s", got, want)
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
				t.Fatalf("mode %v, want 0640", fi.Mode().Perm())
			}
		})
	}
}

// writeSettings writes a settings file called name with content doc and mode perm in a
// directory of the test's, and returns its path.
func writeSettings(t *testing.T, name, doc string, perm os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(doc), perm); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSetEnabledInFileRefuses(t *testing.T) {
	for name, tc := range map[string]struct{ doc, server string }{
		"unknown server": {"servers:\n  a: {transport: stdio, command: x}\n", "b"},
		"invalid file":   {"servers:\n  a: {transport: stdio, command: x, colour: red}\n", "a"},
		"scalar entry":   {"servers:\n  a: {transport: stdio, command: x}\nextra: 1\n", "a"},
	} {
		t.Run(name, func(t *testing.T) {
			path := writeSettings(t, "mcp-servers.yaml", tc.doc, 0o600)
			_, err := SetEnabledInFile(path, tc.server, false)
			if !errors.Is(err, ErrSettingsEdit) {
				t.Fatalf("err %v, want ErrSettingsEdit", err)
			}
			if got, _ := os.ReadFile(path); string(got) != tc.doc {
				t.Fatalf("the file changed:\n%s", got)
			}
			if m, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp*")); len(m) != 0 {
				t.Fatalf("temporary files left: %v", m)
			}
		})
	}
}

func TestSetEnabledInJSONFile(t *testing.T) {
	path := writeSettings(t, "mcp-servers.json", `{"servers": {"a": {"transport": "stdio", "command": "x"}}}`+"\n", 0o600)
	if _, err := SetEnabledInFile(path, "a", false); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if want := `{"servers": {"a": {"enabled": false, "transport": "stdio", "command": "x"}}}` + "\n"; string(got) != want {
		t.Fatalf("file now %s", got)
	}
}
