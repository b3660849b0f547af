package serverdoc_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpclient/serverdoc"
)

// The editor keeps what it does not touch: SetEnabled changes one value and nothing else;
// Add, Remove and ResetEnabled keep comments and key order; Save keeps the mode.
func TestEditorKeepsTheDocument(t *testing.T) {
	const doc = `# MCP servers of this project
servers:
  # the first one
  alpha:
    transport: stdio   # a comment that stays
    command: alpha-server
  gamma: {transport: stdio, command: gamma-server}
`
	path := filepath.Join(t.TempDir(), "mcp-servers.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o640); err != nil {
		t.Fatal(err)
	}
	ed, err := serverdoc.Open(path, serverdoc.EditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if changed, err := ed.SetEnabled("gamma", false); err != nil || !changed {
		t.Fatalf("SetEnabled: %v %v", changed, err)
	}
	if err := ed.Save(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != strings.Replace(doc, "gamma: {transport", "gamma: {enabled: false, transport", 1) {
		t.Fatalf("after SetEnabled:\n%s", got)
	}

	cfg := mcpclient.Config{ServerName: "mem", Transport: mcpclient.TransportStdio, Command: "npx",
		Args: []string{"-y", "@modelcontextprotocol/server-memory"}, Env: map[string]string{"REF": "${secret:mem}", "A": "1"}}
	cfg.Default()
	if err := ed.Add("mem", cfg, true); err != nil {
		t.Fatal(err)
	}
	if err := ed.Add("mem", cfg, true); !errors.Is(err, serverdoc.ErrEdit) {
		t.Fatalf("a second add: %v", err)
	}
	if err := ed.ResetEnabled("gamma"); err != nil {
		t.Fatal(err)
	}
	if removed, err := ed.Remove("alpha"); err != nil || !removed {
		t.Fatalf("Remove: %v %v", removed, err)
	}
	if err := ed.Save(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := `# MCP servers of this project
servers:
  gamma: {transport: stdio, command: gamma-server}
  mem:
    transport: stdio
    command: npx
    args: [-y, '@modelcontextprotocol/server-memory']
    env:
      A: "1"
      REF: ${secret:mem}
`
	if string(got) != want {
		t.Fatalf("file now:\n%s\nwant:\n%s", got, want)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v", fi.Mode().Perm())
	}
	e, err := ed.Entry("mem")
	if err != nil || e.Config.Command != "npx" || e.Config.Env["REF"] != "${secret:mem}" || !e.Enabled {
		t.Fatalf("Entry: %+v %v", e, err)
	}
}

// A change that does not validate is not written; another host's document is not edited.
func TestEditorRefuses(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "servers.json")
	const doc = `{"servers": {"a": {"transport": "stdio", "command": "x"}}}` + "\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	ed, err := serverdoc.Open(path, serverdoc.EditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bad := mcpclient.Config{Transport: mcpclient.TransportStreamableHTTP, URL: "ftp://x"}
	bad.Default()
	if err := ed.Add("b", bad, true); err != nil {
		t.Fatal(err)
	}
	err = ed.Save()
	if !errors.Is(err, serverdoc.ErrEdit) || !errors.Is(err, serverdoc.ErrInvalidSettings) || !strings.Contains(err.Error(), `key "servers.b.url"`) {
		t.Fatalf("Save: %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != doc {
		t.Fatalf("the file changed:\n%s", got)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(m) != 0 {
		t.Fatalf("temporary files left: %v", m)
	}

	if _, err := ed.Remove("b"); err != nil {
		t.Fatal(err)
	}
	c := mcpclient.Config{Transport: mcpclient.TransportStdio, Command: "c"}
	c.Default()
	if err := ed.Add("c", c, true); err != nil {
		t.Fatal(err)
	}
	if err := ed.Save(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if !json.Valid(got) || !strings.Contains(string(got), `"c": {`) {
		t.Fatalf("not JSON with c:\n%s", got)
	}

	foreign := filepath.Join(dir, "claude.json")
	if err := os.WriteFile(foreign, []byte(`{"mcpServers": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := serverdoc.Open(foreign, serverdoc.EditOptions{}); !errors.Is(err, serverdoc.ErrForeign) {
		t.Fatalf("Open of another host's document: %v", err)
	}
}

// Patch changes the keys a typed change touches and keeps the others as written.
func TestPatch(t *testing.T) {
	raw := map[string]any{"serverName": "a", "transport": "stdio", "command": "x", "env": map[string]any{"A": "1"}, "toolCallTimeoutMs": 60000}
	var before mcpclient.Config
	before.Default()
	if err := ctx.DecodeInto(raw, &before); err != nil {
		t.Fatal(err)
	}
	after := before
	after.Env = map[string]string{"A": "1", "B": "${secret:b}"}
	after.OAuth.LoginCommand = "harness mcp login a"
	got := serverdoc.Patch(raw, before, after)
	want := map[string]any{"serverName": "a", "transport": "stdio", "command": "x", "env": map[string]any{"A": "1", "B": "${secret:b}"},
		"toolCallTimeoutMs": 60000, "oauth": map[string]any{"loginCommand": "harness mcp login a"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Patch:\n got %#v\nwant %#v", got, want)
	}
	if _, changed := raw["oauth"]; changed {
		t.Fatal("Patch changed its argument")
	}
}

// An edited JSON document is written whole as indented JSON: keys in their order, empty
// arrays and objects on the line of their key, the others one item a line.
func TestEditorWritesJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "servers.json")
	const doc = `{"servers": {"a": {"transport": "stdio", "command": "x", "args": [], "env": {}}, "b": {"transport": "stdio", "command": "y", "args": ["1", "2"]}}}` + "\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	ed, err := serverdoc.Open(path, serverdoc.EditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := mcpclient.Config{Transport: mcpclient.TransportStdio, Command: "c", Args: []string{"-v"}}
	c.Default()
	if err := ed.Add("c", c, true); err != nil {
		t.Fatal(err)
	}
	if err := ed.Save(); err != nil {
		t.Fatal(err)
	}
	const want = `{
  "servers": {
    "a": {
      "transport": "stdio",
      "command": "x",
      "args": [],
      "env": {}
    },
    "b": {
      "transport": "stdio",
      "command": "y",
      "args": [
        "1",
        "2"
      ]
    },
    "c": {
      "transport": "stdio",
      "command": "c",
      "args": [
        "-v"
      ]
    }
  }
}
`
	if got, _ := os.ReadFile(path); string(got) != want {
		t.Fatalf("file now:\n%s\nwant:\n%s", got, want)
	}
}
