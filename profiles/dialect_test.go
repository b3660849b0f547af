package profiles_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cordisgo/harness/plugins/mcpclient/serverdoc"
	"github.com/cordisgo/harness/profiles"
)

// Every other host's document loads as a profile, directly: one mcpclient row per server
// of serverdoc.Read, enabled as the server is, with its warnings.
func TestLoadServerDocuments(t *testing.T) {
	dir := filepath.Join("..", "plugins", "mcpclient", "serverdoc", "testdata", "dialects")
	from := map[string]string{"claude_code_mcp.json": "claude-code", "cursor_mcp.json": "cursor",
		"gemini_settings.json": "gemini", "cline_mcp_settings.json": "cline"}
	files, err := os.ReadDir(dir)
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: %v", dir, err)
	}
	for _, f := range files {
		t.Run(f.Name(), func(t *testing.T) {
			path := filepath.Join(dir, f.Name())
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := serverdoc.Read(data, serverdoc.ReadOptions{Source: path, From: from[f.Name()]})
			if err != nil {
				t.Fatal(err)
			}
			p := mustLoad(t, profiles.LoadOptions{Name: path})
			for _, s := range doc.Servers {
				// By server name: a server named after a row of the base profile (remote)
				// has its row id prefixed (mcp-remote).
				i := slices.IndexFunc(p.Rows, func(r profiles.Row) bool { return r.Config["serverName"] == s.Name })
				if i < 0 {
					t.Errorf("no row for server %q", s.Name)
					continue
				}
				r := p.Rows[i]
				if r.Use != "mcpclient" || r.Enabled != s.Enabled || r.Config["serverName"] != s.Name {
					t.Errorf("profile row %q: %+v", s.Name, r)
				}
			}
			if from[f.Name()] == "" && !reflect.DeepEqual(p.Warnings, doc.Warnings) {
				t.Errorf("profile warnings %q, want %q", p.Warnings, doc.Warnings)
			}
		})
	}
}

// A profile with a stray mcpServers key is a profile with an unknown key, named, not
// another host's document whose plugins rows would be dropped without a word.
func TestProfileWithStrayMCPServers(t *testing.T) {
	for _, doc := range []string{
		"plugins:\n  gh: {use: mcpclient, config: {serverName: gh}}\nmcpServers:\n  fs: {command: fs-mcp}\n",
		"extends: cli\nmcp_servers: {}\n",
	} {
		_, err := profiles.Load(profiles.LoadOptions{Data: []byte(doc)})
		var pe *profiles.Error
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), `key "mcp`) || !strings.Contains(err.Error(), "unknown key") {
			t.Errorf("%q: got %v, want an unknown-key error naming the key", doc, err)
		}
	}
}
