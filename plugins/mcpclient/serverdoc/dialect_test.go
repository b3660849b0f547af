package serverdoc_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpclient/serverdoc"
)

// Realistic documents of every host the harness reads, converted to the harness's own
// server description: transports, references in the harness's syntax, warnings for keys
// without a counterpart, enabled from disabled.
func TestReadDialects(t *testing.T) {
	type server struct {
		enabled bool
		config  map[string]any
	}
	tests := []struct {
		file, from string
		dialect    string
		servers    map[string]server
		warnings   []string // substrings, in order
	}{
		{file: "claude_desktop_config.json", dialect: serverdoc.DialectMCPServers, servers: map[string]server{
			"filesystem": {true, map[string]any{"transport": "stdio", "command": "npx",
				"args": []any{"-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop", "/Users/me/Downloads"}}},
			"github": {true, map[string]any{"transport": "stdio", "command": "docker",
				"args": []any{"run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"},
				"env":  map[string]any{"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}"}}},
		}},
		{file: "claude_code_mcp.json", from: "claude-code", dialect: serverdoc.DialectMCPServers, servers: map[string]server{
			"memory": {true, map[string]any{"transport": "stdio", "command": "npx", "args": []any{"-y", "@modelcontextprotocol/server-memory"},
				"env": map[string]any{"MEMORY_FILE_PATH": "${MEMORY_FILE:-/tmp/memory.json}"}}},
			"sentry": {true, map[string]any{"transport": "streamable-http", "url": "https://mcp.sentry.dev/mcp",
				"headers": map[string]any{"Authorization": "Bearer ${SENTRY_TOKEN}"}}},
			"linear": {true, map[string]any{"transport": "streamable-http", "url": "https://mcp.linear.app/sse"}},
		}},
		{file: "cursor_mcp.json", from: "cursor", dialect: serverdoc.DialectMCPServers, servers: map[string]server{
			"postgres": {true, map[string]any{"transport": "stdio", "command": "npx",
				"args": []any{"-y", "@modelcontextprotocol/server-postgres", "postgresql://localhost/mydb"},
				"env":  map[string]any{"PGPASSWORD": "${PGPASSWORD}"}}},
			"remote-docs": {true, map[string]any{"transport": "streamable-http", "url": "https://docs.example.com/mcp",
				"headers": map[string]any{"API_KEY": "${DOCS_API_KEY}"}}},
		}},
		{file: "gemini_settings.json", from: "gemini", dialect: serverdoc.DialectMCPServers, servers: map[string]server{
			"everything": {true, map[string]any{"transport": "stdio", "command": "npx", "args": []any{"-y", "@modelcontextprotocol/server-everything"},
				"env": map[string]any{"API_TOKEN": "${EVERYTHING_TOKEN}"}, "toolCallTimeoutMs": 30000,
				"allowedTools": []any{"echo", "add"}, "deniedTools": []any{"add"}}},
			"remote": {true, map[string]any{"transport": "streamable-http", "url": "https://api.example.com/mcp",
				"headers": map[string]any{"Authorization": "Bearer ${API_TOKEN}"}}},
		}, warnings: []string{`"mcpServers.everything.trust": ignored`, `"mcpServers.remote.description": ignored`}},
		{file: "cline_mcp_settings.json", from: "cline", dialect: serverdoc.DialectMCPServers, servers: map[string]server{
			"fetch": {true, map[string]any{"transport": "stdio", "command": "uvx", "args": []any{"mcp-server-fetch"}, "toolCallTimeoutMs": 60000}},
			"brave-search": {false, map[string]any{"transport": "stdio", "command": "npx",
				"args": []any{"-y", "@modelcontextprotocol/server-brave-search"}, "env": map[string]any{"BRAVE_API_KEY": "BSA-literal-key"}}},
			"weather": {true, map[string]any{"transport": "streamable-http", "url": "http://localhost:8787/mcp"}},
		}, warnings: []string{`"mcpServers.fetch.autoApprove": ignored`, `"mcpServers.brave-search.alwaysAllow": ignored: per-tool auto-approval`}},
		{file: "vscode_mcp.json", dialect: serverdoc.DialectVSCode, servers: map[string]server{
			"github": {true, map[string]any{"transport": "streamable-http", "url": "https://api.githubcopilot.com/mcp/",
				"headers": map[string]any{"Authorization": "Bearer ${secret:github-pat}"}}},
			"fs": {true, map[string]any{"transport": "stdio", "command": "npx",
				"args": []any{"-y", "@modelcontextprotocol/server-filesystem", "${PWD}"},
				"env":  map[string]any{"HOME_DIR": "${HOME}", "LOG": "${FS_LOG_LEVEL}"}}},
		}, warnings: []string{`${input:github-pat} becomes ${secret:github-pat}`, `"servers.fs.envFile": ignored`, `${workspaceFolder} becomes ${PWD}`}},
		{file: "codex_config.toml", dialect: serverdoc.DialectCodex, servers: map[string]server{
			"docs": {true, map[string]any{"transport": "stdio", "command": "docs-server",
				"args": []any{"--port", "4000", "--literal=$${NOT_A_REFERENCE}"}, "env": map[string]any{"API_KEY": "value"},
				"inheritEnv": map[string]any{"extra": []any{"HTTPS_PROXY"}}, "startupTimeoutMs": 20000, "toolCallTimeoutMs": 45500,
				"allowedTools": []any{"search", "open"}, "deniedTools": []any{"open"}}},
			"figma": {true, map[string]any{"transport": "streamable-http", "url": "https://mcp.figma.com/mcp",
				"headers": map[string]any{"X-Figma-Region": "us-east-1", "X-Org": "${FIGMA_ORG}", "Authorization": "Bearer ${FIGMA_OAUTH_TOKEN}"}}},
			"off": {false, map[string]any{"transport": "stdio", "command": "off-server"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", "dialects", tt.file)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !serverdoc.IsForeign(path, data) {
				t.Errorf("not recognised as a server document")
			}
			doc, err := serverdoc.Read(data, serverdoc.ReadOptions{Source: path, From: tt.from})
			if err != nil {
				t.Fatal(err)
			}
			if doc.Dialect != tt.dialect {
				t.Errorf("dialect %q, want %q", doc.Dialect, tt.dialect)
			}
			var names []string
			for _, s := range doc.Servers {
				names = append(names, s.Name)
				want, ok := tt.servers[s.Name]
				if !ok {
					t.Errorf("unexpected server %q", s.Name)
					continue
				}
				if wantConfig := typed(t, s.Name, want.config); s.Enabled != want.enabled || !reflect.DeepEqual(s.Config, wantConfig) {
					t.Errorf("server %q\n got %v %#v\nwant %v %#v", s.Name, s.Enabled, s.Config, want.enabled, wantConfig)
				}
			}
			// In the document's order: where each name first appears as a key.
			data, err = os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			at := func(name string) int {
				for _, key := range []string{`"` + name + `"`, "." + name + "]", "." + name + "."} {
					if i := strings.Index(string(data), key); i >= 0 {
						return i
					}
				}
				return -1
			}
			if len(names) != len(tt.servers) || !slices.IsSortedFunc(names, func(a, b string) int { return at(a) - at(b) }) {
				t.Errorf("servers %v: want all %d, in the document's order", names, len(tt.servers))
			}
			joined := strings.Join(doc.Warnings, "\n")
			for _, w := range tt.warnings {
				i := strings.Index(joined, w)
				if i < 0 {
					t.Errorf("no warning %q in\n%s", w, joined)
					continue
				}
				joined = joined[i:]
			}

		})
	}
}

// Without --from, a timeout is ambiguous (seconds for Cline, milliseconds for gemini-cli):
// it is dropped with a warning instead of guessed.
func TestReadAmbiguousTimeout(t *testing.T) {
	doc, err := serverdoc.Read([]byte(`{"mcpServers": {"a": {"command": "x", "timeout": 60}}}`), serverdoc.ReadOptions{Source: "x.json"})
	if err != nil {
		t.Fatal(err)
	}
	var def mcpclient.Config
	def.Default()
	if doc.Servers[0].Config.ToolCallTimeoutMs != def.ToolCallTimeoutMs || len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "--from cline or --from gemini") {
		t.Fatalf("config %v warnings %q", doc.Servers[0].Config, doc.Warnings)
	}
	if _, err := serverdoc.Read([]byte(`{}`), serverdoc.ReadOptions{Source: "x.json", From: "emacs"}); err == nil || !strings.Contains(err.Error(), `unknown host "emacs": expected one of claude, claude-code, cline, codex, cursor, gemini, roo, vscode`) {
		t.Fatalf("unknown host: %v", err)
	}
}

// A profile with a stray mcpServers key is a profile (with an unknown key), not another
// host's document whose plugins rows would be dropped without a word.
func TestProfileIsNotForeign(t *testing.T) {
	for _, doc := range []string{
		"plugins:\n  gh: {use: mcpclient, config: {serverName: gh}}\nmcpServers:\n  fs: {command: fs-mcp}\n",
		"extends: cli\nmcp_servers: {}\n",
	} {
		if serverdoc.IsForeign("p.yaml", []byte(doc)) {
			t.Errorf("%q read as a server document", doc)
		}
	}
	if !serverdoc.IsForeign("mcp.json", []byte(`{"mcpServers": {"fs": {"command": "fs-mcp"}}}`)) {
		t.Error("an mcpServers document is no longer recognized")
	}
}

// typed is the configuration of server name whose document gave the keys of config.
func typed(t *testing.T, name string, config map[string]any) mcpclient.Config {
	t.Helper()
	var c mcpclient.Config
	c.Default()
	if err := ctx.DecodeInto(config, &c); err != nil {
		t.Fatalf("server %q: %v", name, err)
	}
	c.ServerName = name
	return c
}

// A disabled (JSON hosts) or enabled (Codex) that is not a boolean is refused, naming the
// key.
func TestReadFlagNotBoolean(t *testing.T) {
	for _, c := range []struct{ doc, source, key string }{
		{`{"mcpServers": {"a": {"command": "x", "disabled": "yes"}}}`, "x.json", "mcpServers.a.disabled"},
		{"[mcp_servers.a]\ncommand = \"x\"\nenabled = \"yes\"\n", "config.toml", "mcp_servers.a.enabled"},
	} {
		_, err := serverdoc.Read([]byte(c.doc), serverdoc.ReadOptions{Source: c.source})
		if !errors.Is(err, ctx.ErrWrongType) || !strings.Contains(err.Error(), c.key) || !strings.Contains(err.Error(), "expected a boolean, got") {
			t.Errorf("%s: %v, want a wrong type naming %s", c.source, err, c.key)
		}
	}
}
