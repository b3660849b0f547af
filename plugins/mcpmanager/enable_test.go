package mcpmanager

import (
	"errors"
	"os"
	"path/filepath"
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
	cases := []struct {
		name    string
		enabled bool
		want    string
		changed bool
	}{
		{"alpha", false, `# MCP servers of this project
servers:
  # the first one
  alpha:
    enabled: false
    transport: stdio   # a comment that stays
    command: alpha-server
  beta:
    enabled: true
    transport: stdio
    command: beta-server
  gamma: {transport: stdio, command: gamma-server}
  delta: {enabled: false, transport: stdio, command: delta-server}
`, true},
		{"beta", false, `# MCP servers of this project
servers:
  # the first one
  alpha:
    transport: stdio   # a comment that stays
    command: alpha-server
  beta:
    enabled: false
    transport: stdio
    command: beta-server
  gamma: {transport: stdio, command: gamma-server}
  delta: {enabled: false, transport: stdio, command: delta-server}
`, true},
		{"gamma", false, `# MCP servers of this project
servers:
  # the first one
  alpha:
    transport: stdio   # a comment that stays
    command: alpha-server
  beta:
    enabled: true
    transport: stdio
    command: beta-server
  gamma: {enabled: false, transport: stdio, command: gamma-server}
  delta: {enabled: false, transport: stdio, command: delta-server}
`, true},
		{"delta", true, `# MCP servers of this project
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
  delta: {enabled: true, transport: stdio, command: delta-server}
`, true},
		{"beta", true, doc, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "mcp-servers.yaml")
			if err := os.WriteFile(path, []byte(doc), 0o640); err != nil {
				t.Fatal(err)
			}
			changed, err := SetEnabledInFile(path, c.name, c.enabled)
			if err != nil || changed != c.changed {
				t.Fatalf("SetEnabledInFile: changed %v, err %v", changed, err)
			}
			got, _ := os.ReadFile(path)
			if string(got) != c.want {
				t.Fatalf("file now:\n%s\nwant:\n%s", got, c.want)
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
				t.Fatalf("mode %v, want 0640", fi.Mode().Perm())
			}
		})
	}
}

func TestSetEnabledInFileRefuses(t *testing.T) {
	for name, tc := range map[string]struct{ doc, server string }{
		"unknown server": {"servers:\n  a: {transport: stdio, command: x}\n", "b"},
		"invalid file":   {"servers:\n  a: {transport: stdio, command: x, colour: red}\n", "a"},
		"scalar entry":   {"servers:\n  a: {transport: stdio, command: x}\nextra: 1\n", "a"},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "mcp-servers.yaml")
			if err := os.WriteFile(path, []byte(tc.doc), 0o600); err != nil {
				t.Fatal(err)
			}
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
	path := filepath.Join(t.TempDir(), "mcp-servers.json")
	doc := `{"servers": {"a": {"transport": "stdio", "command": "x"}}}` + "\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := SetEnabledInFile(path, "a", false); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if want := `{"servers": {"a": {"enabled": false, "transport": "stdio", "command": "x"}}}` + "\n"; string(got) != want {
		t.Fatalf("file now %s", got)
	}
}
