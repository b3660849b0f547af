package serverdoc_test

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpclient/serverdoc"
)

func TestParseSettingsRejects(t *testing.T) {
	cases := []struct {
		name, doc, want string
	}{
		{"empty", "", "the file is empty"},
		{"blank", "\n  \n", "the file is empty"},
		{"comment only", "# nothing\n", "no YAML document"},
		{"not yaml", "servers: [\n", "not valid YAML"},
		{"half written", "servers:\n  a:\n    transport: stdio\n    command: \"unterminated\n", "line 4: not valid YAML"},
		{"broken line", "servers:\n  a:\n    transport: stdio\n   command: x\n", "line 4: not valid YAML"},
		{"root list", "- a\n", "expected a mapping with a servers key"},
		{"unknown top key", "servers: {}\nextra: 1\n", `key "extra": unknown key`},
		{"servers list", "servers: [a]\n", "expected a mapping of server name to entry"},
		{"bad name", "servers:\n  bad.name: {transport: stdio, command: x}\n", "must match"},
		{"duplicate", "servers:\n  a: {transport: stdio, command: x}\n  a: {transport: stdio, command: y}\n", "servers.a"},
		{"serverName", "servers:\n  a: {serverName: b, transport: stdio, command: x}\n", "serverName"},
		{"enabled string", "servers:\n  a: {enabled: yes, transport: stdio, command: x}\n", "expected true or false"},
		{"unknown key", "servers:\n  a: {transport: stdio, command: x, colour: red}\n", `servers.a.colour": unknown key`},
		{"wrong type", "servers:\n  a:\n    transport: stdio\n    command: x\n    toolCallTimeoutMs: soon\n", `line 5: key "servers.a.toolCallTimeoutMs": expected an integer, got string`},
		{"entry scalar", "servers:\n  a: 3\n", "expected a mapping"},
		{"template syntax", "servers:\n  a: {transport: stdio, command: \"${UNCLOSED\"}\n", "command"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := serverdoc.ReadSettings("s.yaml", []byte(c.doc))
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, serverdoc.ErrInvalidSettings) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q: want it to contain %q and match serverdoc.ErrInvalidSettings", err, c.want)
			}
			if !strings.Contains(err.Error(), `settings file "s.yaml"`) {
				t.Fatalf("error %q does not name the file", err)
			}
		})
	}
	// An empty servers key is valid and configures nothing.
	for _, doc := range []string{"servers: {}\n", "servers:\n", "{}\n"} {
		if s, err := serverdoc.ReadSettings("s.yaml", []byte(doc)); err != nil || len(s.Entries) != 0 {
			t.Fatalf("%q: %v %v", doc, s, err)
		}
	}
}

// The settings file is decoded by the same strict decoder as a profile's mcpclient row: a
// key in the wrong case is refused with the same message, and every problem of the file
// is reported at once, in document order, with its line.
func TestParseSettingsOneDecoderAllProblems(t *testing.T) {
	doc := "servers:\n" +
		"  a:\n" +
		"    transport: stdio\n" +
		"    Command: x\n" + // line 4
		"  b:\n" +
		"    transport: stdio\n" +
		"    command: y\n" +
		"    toolCallTimeoutMs: soon\n" + // line 8
		"    colour: red\n" // line 9
	_, err := serverdoc.ReadSettings("s.yaml", []byte(doc))
	list := ctx.ConfigErrors(err)
	if len(list) != 3 {
		t.Fatalf("%d problems, want 3:\n%v", len(list), err)
	}
	want := []string{
		`settings file "s.yaml": line 4: key "servers.a.Command": unknown key (did you mean "command"?)`,
		`settings file "s.yaml": line 8: key "servers.b.toolCallTimeoutMs": expected an integer, got string`,
		`settings file "s.yaml": line 9: key "servers.b.colour": unknown key`,
	}
	for i, w := range want {
		if !strings.HasPrefix(list[i].Error(), w) || list[i].File != "s.yaml" || !errors.Is(list[i], serverdoc.ErrInvalidSettings) {
			t.Errorf("problem %d = %q (file %q), want %q", i, list[i].Error(), list[i].File, w)
		}
	}
	// A profile row says the same about the same key.
	_, perr := mcpclient.Plugin.DecodeConfig(map[string]any{"serverName": "a", "transport": "stdio", "Command": "x"})
	if perr == nil || !strings.Contains(perr.Error(), `key "Command": unknown key (did you mean "command"?)`) {
		t.Errorf("profile row: %v", perr)
	}
}

// Errors never quote values from the file: a secret pasted in the wrong place must not
// reach logs.
func TestParseSettingsErrorsQuoteNoValues(t *testing.T) {
	const secret = "sk-live-0123456789abcdef"
	for _, doc := range []string{
		"servers:\n  a:\n    transport: stdio\n    command: x\n    toolCallTimeoutMs: " + secret + "\n",
		"servers:\n  a:\n    transport: stdio\n    command: x\n    env: " + secret + "\n",
		"servers:\n  a:\n    transport: stdio\n    command: x\n    args: {k: " + secret + "}\n",
		"servers:\n  a:\n    enabled: " + secret + "\n",
		"servers:\n  a: " + secret + "\n",
		`{"mcpServers": {"a": {"command": "x", "args": "` + secret + `"}}}`,
		`{"mcpServers": {"a": {"url": "` + secret + `"}}}`,
		`{"mcpServers": {"a": {"command": "x", "disabled": "` + secret + `"}}}`,
	} {
		_, err := serverdoc.ReadSettings("s.yaml", []byte(doc))
		if err == nil {
			t.Fatalf("accepted %q", doc)
		}
		if strings.Contains(err.Error(), secret) {
			t.Fatalf("error quotes the value: %v", err)
		}
	}
}

// The settings file may be another host's document: Claude's mcpServers, VS Code's servers
// with inputs, Codex's config.toml. Its servers become entries decoded by the same decoder;
// keys without a counterpart are warnings; a bad entry names the file and the key path.
func TestReadSettingsOtherHosts(t *testing.T) {
	cases := []struct {
		file, doc string
		want      map[string]bool // name → enabled
		warning   string
	}{
		{"claude.json", `{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "pkg"], "autoApprove": ["x"]},
			"off": {"command": "y", "disabled": true}}}`, map[string]bool{"fs": true, "off": false}, `key "mcpServers.fs.autoApprove": ignored`},
		{"mcp.json", `{"inputs": [{"id": "tok", "type": "promptString"}], "servers": {"gh": {"type": "http",
			"url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${input:tok}"}}}}`, map[string]bool{"gh": true}, "becomes ${secret:tok}"},
		{"config.toml", "[mcp_servers.docs]\ncommand = \"docs\"\nenabled = false\n", map[string]bool{"docs": false}, ""},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			s, err := serverdoc.ReadSettings(c.file, []byte(c.doc))
			if err != nil {
				t.Fatal(err)
			}
			warnings := s.Warnings
			got := map[string]bool{}
			for _, e := range s.Entries {
				got[e.Name] = e.Enabled
				if e.Config.ServerName != e.Name {
					t.Errorf("entry %q has serverName %q", e.Name, e.Config.ServerName)
				}
			}
			if !maps.Equal(got, c.want) {
				t.Errorf("entries %v, want %v", got, c.want)
			}
			if c.warning != "" && !strings.Contains(strings.Join(warnings, "\n"), c.warning) {
				t.Errorf("warnings %q lack %q", warnings, c.warning)
			}
		})
	}
	if s, _ := serverdoc.ReadSettings("mcp.json", []byte(cases[1].doc)); s.Entries[0].Config.Headers["Authorization"] != "Bearer ${secret:tok}" {
		t.Errorf("VS Code input not a secret reference: %v", s.Entries[0].Config.Headers)
	}
	_, err := serverdoc.ReadSettings("claude.json", []byte(`{"mcpServers": {"fs": {"command": "x", "args": [1]}}}`))
	if err == nil || !errors.Is(err, serverdoc.ErrInvalidSettings) || !strings.Contains(err.Error(), `settings file "claude.json": key "mcpServers.fs.args.0": expected a string, got a number`) {
		t.Fatalf("bad entry: %v", err)
	}
}

// CheckFile adds what a mount would check to ReadSettings, with lines; a missing file
// configures nothing.
func TestCheckFile(t *testing.T) {
	dir := t.TempDir()
	if w, err := serverdoc.CheckFile(filepath.Join(dir, "none.yaml")); w != nil || err != nil {
		t.Fatalf("missing file: %v %v", w, err)
	}
	path := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(path, []byte("servers:\n  a:\n    transport: streamable-http\n    url: ftp://x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := serverdoc.CheckFile(path)
	if !errors.Is(err, serverdoc.ErrInvalidSettings) || !strings.Contains(err.Error(), `line 4: key "servers.a.url"`) {
		t.Fatalf("CheckFile: %v", err)
	}
}
