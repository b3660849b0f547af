package host_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/plugins/mcpclient/serverdoc"
	"github.com/cordisgo/harness/profiles"
)

// importDoc converts doc with the harness's reader, as "mcp import" does.
func importDoc(doc []byte, source string) ([]byte, error) {
	im, err := profiles.ImportServers(doc, profiles.ImportOptions{Source: source, Servers: host.ServerDocuments{}})
	if err != nil {
		return nil, err
	}
	return im.YAML, nil
}

// loadWith loads a profile with the harness's reader of other hosts' documents.
func loadWith(t *testing.T, opts profiles.LoadOptions) *profiles.Profile {
	t.Helper()
	opts.Servers = host.ServerDocuments{}
	p, err := profiles.Load(opts)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return p
}

// Another host's document given as the profile loads through the reader, its problems
// named as the profile's, with their kinds.
func TestLoadServerDocumentProblem(t *testing.T) {
	_, err := profiles.Load(profiles.LoadOptions{Name: "my.yaml", Data: []byte(`{"mcpServers": {"a": {"command": 5}}}`), Servers: host.ServerDocuments{}})
	want := `profile "my.yaml": key "mcpServers.a.command": expected a non-empty string, got number 5`
	if err == nil || err.Error() != want || !errors.Is(err, profiles.ErrType) {
		t.Fatalf("got %v, want %s (ErrType)", err, want)
	}
}

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
			p := loadWith(t, profiles.LoadOptions{Name: path})
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
			// The document's warnings, then the note that the settings file's servers run too.
			if n := len(p.Warnings); n == 0 || !strings.Contains(p.Warnings[n-1], "plugins.manager.enabled=false") {
				t.Errorf("profile warnings %q: no note on the settings file's servers", p.Warnings)
			} else if from[f.Name()] == "" && !slices.Equal(p.Warnings[:n-1], doc.Warnings) {
				t.Errorf("profile warnings %q, want %q", p.Warnings[:n-1], doc.Warnings)
			}
		})
	}
}

func TestImportRoundTrips(t *testing.T) {
	tests := []struct {
		name  string
		doc   string
		rows  []string // ids after the cli rows
		check map[string]profiles.Row
	}{
		{
			name: "stdio with everything",
			doc: `{"mcpServers": {"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github", "123", "true", ""],
				"env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "0123", "Z": "null"}, "cwd": "/srv/gh"}}}`,
			rows: []string{"github"},
			check: map[string]profiles.Row{"github": {Use: "mcpclient", Enabled: true, Config: map[string]any{
				"serverName": "github", "transport": "stdio", "command": "npx",
				"args": []any{"-y", "@modelcontextprotocol/server-github", "123", "true", ""},
				"env":  map[string]any{"GITHUB_PERSONAL_ACCESS_TOKEN": "0123", "Z": "null"},
				"cwd":  "/srv/gh",
			}}},
		},
		{
			name: "http kinds, in the document's order",
			doc: `{"mcpServers": {
				"zeta": {"type": "sse", "url": "https://z.example/sse"},
				"alpha": {"url": "http://127.0.0.1:8080/mcp", "headers": {"Authorization": "Bearer x"}},
				"mid": {"type": "streamable-http", "url": "https://m.example/mcp"},
				"mid2": {"type": "streamableHttp", "url": "https://m2.example/mcp"},
				"other": {"type": "http", "url": "https://o.example/mcp", "headers": {}}}}`,
			rows: []string{"zeta", "alpha", "mid", "mid2", "other"},
			check: map[string]profiles.Row{
				"alpha": {Use: "mcpclient", Enabled: true, Config: map[string]any{
					"serverName": "alpha", "transport": "streamable-http", "url": "http://127.0.0.1:8080/mcp",
					"headers": map[string]any{"Authorization": "Bearer x"}}},
				"zeta": {Use: "mcpclient", Enabled: true, Config: map[string]any{
					"serverName": "zeta", "transport": "streamable-http", "url": "https://z.example/sse"}},
				"other": {Use: "mcpclient", Enabled: true, Config: map[string]any{
					"serverName": "other", "transport": "streamable-http", "url": "https://o.example/mcp",
					"headers": map[string]any{}}},
			},
		},
		{
			name: "disabled and ignored fields",
			doc:  `{"mcpServers": {"fs": {"type": "stdio", "command": "mcp-fs", "disabled": true, "autoApprove": ["read"], "alwaysAllow": []}, "on": {"command": "x", "disabled": false}}}`,
			rows: []string{"fs", "on"},
			check: map[string]profiles.Row{
				"fs": {Use: "mcpclient", Enabled: false, Config: map[string]any{"serverName": "fs", "transport": "stdio", "command": "mcp-fs"}},
				"on": {Use: "mcpclient", Enabled: true, Config: map[string]any{"serverName": "on", "transport": "stdio", "command": "x"}},
			},
		},
		{
			name: "names of base rows are prefixed",
			doc:  `{"mcpServers": {"tools": {"command": "a"}, "mcp-tools": {"command": "b"}, "Prompt": {"command": "c"}}}`,
			rows: []string{"mcp-mcp-tools", "mcp-tools", "mcp-Prompt"},
			check: map[string]profiles.Row{
				"mcp-Prompt":    {Use: "mcpclient", Enabled: true, Config: map[string]any{"serverName": "Prompt", "transport": "stdio", "command": "c"}},
				"mcp-tools":     {Use: "mcpclient", Enabled: true, Config: map[string]any{"serverName": "mcp-tools", "transport": "stdio", "command": "b"}},
				"mcp-mcp-tools": {Use: "mcpclient", Enabled: true, Config: map[string]any{"serverName": "tools", "transport": "stdio", "command": "a"}},
			},
		},
		{
			name: "VS Code servers key and other top-level keys",
			doc:  `{"inputs": [{"id": "tok"}], "servers": {"gh": {"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${input:tok}"}}}}`,
			rows: []string{"gh"},
			check: map[string]profiles.Row{"gh": {Use: "mcpclient", Enabled: true, Config: map[string]any{
				"serverName": "gh", "transport": "streamable-http", "url": "https://api.githubcopilot.com/mcp/",
				"headers": map[string]any{"Authorization": "Bearer ${secret:tok}"}}}},
		},
		{
			name: "no servers",
			doc:  `{"mcpServers": {}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := importDoc([]byte(tt.doc), "mcp.json")
			if err != nil {
				t.Fatal(err)
			}
			again, err := importDoc([]byte(tt.doc), "mcp.json")
			if err != nil || string(again) != string(out) {
				t.Fatalf("import is not deterministic")
			}
			p := loadWith(t, profiles.LoadOptions{Name: "imported.yaml", Data: out})
			want := append([]string{"tools", "prompt", "resources", "prompts", "model", "manager", "remote", "console", "agent"}, tt.rows...)
			byID := map[string]profiles.Row{}
			var got []string
			for _, r := range p.Rows {
				byID[r.ID] = r
				got = append(got, r.ID)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("rows %v, want %v\n%s", got, want, out)
			}
			for id, w := range tt.check {
				r := byID[id]
				if r.Use != w.Use || r.Enabled != w.Enabled || !reflect.DeepEqual(r.Config, w.Config) {
					t.Errorf("row %q\n got %+v\nwant %+v\n%s", id, r, w, out)
				}
			}
			if !strings.HasPrefix(string(out), "# Generated by \"harness mcp import\" from \"mcp.json\".") {
				t.Errorf("no header:\n%s", out)
			}
		})
	}
}

func TestImportOutput(t *testing.T) {
	out, err := importDoc([]byte(`{"mcpServers": {"gh": {"command": "npx", "args": ["-y", "server-github"], "env": {"TOKEN": "t"}}}}`), "claude.json")
	if err != nil {
		t.Fatal(err)
	}
	want := `# Generated by "harness mcp import" from "claude.json".
# It extends the built-in cli profile (tool registry, system prompt, MCP resources and prompts);
# without the extends line, the rows below paste into any profile.
description: MCP servers imported from "claude.json".
extends: cli
plugins:
  gh:
    use: mcpclient
    config:
      serverName: gh
      transport: stdio
      command: npx
      args: [-y, server-github]
      env:
        TOKEN: t
`
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

func TestImportRejectsBadDocuments(t *testing.T) {
	tests := []struct {
		doc  string
		want string
		kind error
	}{
		{`{"mcpServers": {`, `mcp import "x.json": line 1: invalid JSON: unexpected end of JSON input`, profiles.ErrSyntax},
		{"{\n\"mcpServers\": {,}}", `line 2: invalid JSON: invalid character ','`, profiles.ErrSyntax},
		{`[1]`, `expected a JSON object with "mcpServers", got a JSON array`, profiles.ErrType},
		{`null`, `missing key "mcpServers"`, profiles.ErrInvalid},
		{`{"other": {}}`, `missing key "mcpServers": expected {"mcpServers": {NAME: {…}}}`, profiles.ErrInvalid},
		{`{"mcpServers": {}, "servers": {}}`, `both "mcpServers" and "servers"`, profiles.ErrDuplicate},
		{`{"mcpServers": []}`, `key "mcpServers": expected a map of servers keyed by name, got a list`, profiles.ErrType},
		{`{"mcpServers": {"a": "npx"}}`, `key "mcpServers.a": expected a server object, got string "npx"`, profiles.ErrType},
		{`{"mcpServers": {"my server": {"command": "x"}}}`, `key "mcpServers.my server": invalid server name "my server"`, profiles.ErrInvalid},
		{`{"mcpServers": {"GH": {"command": "x"}, "gh": {"command": "y"}}}`, `server names "GH" and "gh" differ only in case`, profiles.ErrDuplicate},
		{`{"mcpServers": {"a": {}}}`, `key "mcpServers.a": missing key "command" or "url"`, profiles.ErrInvalid},
		{`{"mcpServers": {"a": {"command": "x", "url": "http://y"}}}`, `key "mcpServers.a": both "command" and "url"`, profiles.ErrInvalid},
		{`{"mcpServers": {"a": {"command": "x", "timeout": "soon"}}}`, `mcp import "x.json": key "mcpServers.a.timeout": expected a positive whole number, got string "soon"`, profiles.ErrType},
		{`{"mcpServers": {"a": {"command": "x", "colour": "red"}}}`, `mcp import "x.json": key "mcpServers.a.colour": unknown key: expected command, args, env, cwd, url, headers, type, disabled`, profiles.ErrUnknownKey},
		{`{"servers": {"a": {"type": "stdio", "command": "x", "args": ["${input:nope}"]}}, "inputs": []}`, `key "servers.a.args.0": ${input:nope} names no entry of inputs`, profiles.ErrInvalid},
		{`{"mcpServers": {"a": {"command": "x", "args": ["${config:editor.x}"]}}}`, `key "mcpServers.a.args.0": ${config:editor.x}: expected ${VAR}`, profiles.ErrInvalid},
		{"[mcp_servers.a]\ncommand = 5\n", `key "mcp_servers.a.command": expected a non-empty string, got integer 5`, profiles.ErrType},
		{"[mcp_servers.a\n", `line 1: invalid TOML`, profiles.ErrSyntax},
		{`{"mcpServers": {"a": {"command": "x", "envFile": ".env"}}}`, `key "mcpServers.a.envFile": unknown key`, profiles.ErrUnknownKey},
		{`{"mcpServers": {"a": {"command": 5}}}`, `key "mcpServers.a.command": expected a non-empty string, got number 5`, profiles.ErrType},
		{`{"mcpServers": {"a": {"command": " "}}}`, `key "mcpServers.a.command": expected a non-empty string`, profiles.ErrType},
		{`{"mcpServers": {"a": {"command": "x", "args": "-y"}}}`, `key "mcpServers.a.args": expected a list of strings, got string "-y"`, profiles.ErrType},
		{`{"mcpServers": {"a": {"command": "x", "args": ["-y", 5]}}}`, `key "mcpServers.a.args.1": expected a string, got number 5`, profiles.ErrType},
		{`{"mcpServers": {"a": {"command": "x", "env": {"PORT": 8080}}}}`, `key "mcpServers.a.env.PORT": expected a string, got number 8080`, profiles.ErrType},
		{`{"mcpServers": {"a": {"command": "x", "env": ["A=1"]}}}`, `key "mcpServers.a.env": expected a map of strings, got a list`, profiles.ErrType},
		{`{"mcpServers": {"a": {"command": "x", "cwd": false}}}`, `key "mcpServers.a.cwd": expected a string, got boolean false`, profiles.ErrType},
		{`{"mcpServers": {"a": {"command": "x", "disabled": "yes"}}}`, `key "mcpServers.a.disabled": expected a boolean, got string "yes"`, profiles.ErrType},
		{`{"mcpServers": {"a": {"command": "x", "headers": {}}}}`, `key "mcpServers.a.headers": "headers" apply to HTTP servers`, profiles.ErrInvalid},
		{`{"mcpServers": {"a": {"url": "http://x", "env": {}}}}`, `key "mcpServers.a.env": "env" applies to stdio servers`, profiles.ErrInvalid},
		{`{"mcpServers": {"a": {"url": "ftp://x"}}}`, `key "mcpServers.a.url": expected an http:// or https:// URL, got string "ftp://x"`, profiles.ErrInvalid},
		{`{"mcpServers": {"a": {"type": "ws", "url": "http://x"}}}`, `key "mcpServers.a.type": expected stdio, http, streamable-http, streamableHttp or sse, got string "ws"`, profiles.ErrInvalid},
		{`{"mcpServers": {"a": {"type": "stdio", "url": "http://x"}}}`, `key "mcpServers.a.url": type stdio takes "command", not "url"`, profiles.ErrInvalid},
		{`{"mcpServers": {"a": {"type": "http", "command": "x"}}}`, `key "mcpServers.a.command": type http takes "url", not "command"`, profiles.ErrInvalid},
		{`{"servers": {"a": {"url": 1}}}`, `key "servers.a.url": expected a non-empty string, got number 1`, profiles.ErrType},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			out, err := importDoc([]byte(tt.doc), "x.json")
			if err == nil {
				t.Fatalf("import succeeded:\n%s", out)
			}
			var pe *profiles.Error
			if !errors.As(err, &pe) || pe.Op != "mcp import" {
				t.Fatalf("error %T %+v is not an mcp import *profiles.Error", err, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error\n got %s\nwant it to contain %s", err, tt.want)
			}
			if !errors.Is(err, tt.kind) {
				t.Errorf("error %v is not %v", err, tt.kind)
			}
		})
	}
}

// FuzzImport feeds arbitrary documents of every dialect to ImportServers with the
// harness's reader:
// it never panics, fails only with an *Error, and what it produces loads.
// Seeds: testdata/fuzz/FuzzImport.
func FuzzImport(f *testing.F) {
	f.Add([]byte(`{"mcpServers": {"a": {"command": "x", "args": ["1"], "env": {"K": "v"}}, "b": {"url": "https://b", "type": "sse"}}}`))
	f.Add([]byte("{\n\t// c\n\t\"inputs\": [{\"id\": \"t\"}],\n\t\"servers\": {\"g\": {\"type\": \"http\", \"url\": \"https://g\", \"headers\": {\"A\": \"${input:t}\"}},},\n}"))
	f.Add([]byte("[mcp_servers.d]\ncommand = \"d\"\nargs = [\"${X}\"]\nenv_vars = [\"P\"]\ntool_timeout_sec = 2.5\n"))
	f.Add([]byte(`{"mcpServers": {"g": {"httpUrl": "https://g", "includeTools": ["a"], "timeout": 5, "trust": true}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := importDoc(data, "fuzz.json")
		if err != nil {
			var pe *profiles.Error
			if !errors.As(err, &pe) || pe.Op != "mcp import" {
				t.Fatalf("error %T is not an mcp import *profiles.Error: %v", err, err)
			}
			return
		}
		if _, err := profiles.Load(profiles.LoadOptions{Name: "imported.yaml", Data: out}); err != nil {
			t.Fatalf("the import does not load: %v\n%s", err, out)
		}
	})
}

// A program that loads profiles installs the harness's reader of other hosts' server
// documents; "mcp import" converts one the same way.
func ExampleServerDocuments() {
	doc := `{"mcpServers": {"github": {"command": "github-mcp-server", "args": ["stdio"], "env": {"GITHUB_TOKEN": "ghp_x"}}}}`
	im, err := profiles.ImportServers([]byte(doc), profiles.ImportOptions{Source: "claude.json", Servers: host.ServerDocuments{}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(strings.SplitN(string(im.YAML), "extends:", 2)[1])
	// Output:
	//  cli
	// plugins:
	//   github:
	//     use: mcpclient
	//     config:
	//       serverName: github
	//       transport: stdio
	//       command: github-mcp-server
	//       args: [stdio]
	//       env:
	//         GITHUB_TOKEN: ghp_x
}
