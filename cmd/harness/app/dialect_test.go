package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Other hosts' documents are read directly by -p and converted by mcp import --from; keys
// without a counterpart are warned about on stderr, not fatal.
func TestOtherHostsDocuments(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cline := writeFile(t, dir, "cline_mcp_settings.json", `{"mcpServers": {
  "fetch": {"command": "uvx", "args": ["mcp-server-fetch"], "autoApprove": ["fetch"], "timeout": 60},
  "off": {"command": "x", "disabled": true}}}`)
	r := run(t, nil, "-p", cline, "profile", "check")
	r.expect(t, ExitOK, "ok (10 plugin rows)", `warning: key "mcpServers.fetch.autoApprove": ignored`)
	show := run(t, nil, "-p", cline, "profile", "show")
	show.expect(t, ExitOK, "enabled: false", "")

	codex := writeFile(t, dir, "config.toml", `model = "o3"
[mcp_servers.figma]
url = "https://mcp.figma.com/mcp"
bearer_token_env_var = "FIGMA_TOKEN"
tool_timeout_sec = 30
`)
	imp := run(t, nil, "mcp", "import", "--from", "codex", codex)
	imp.expect(t, ExitOK, "Authorization: Bearer ${FIGMA_TOKEN}", "")
	for _, want := range []string{"transport: streamable-http", "toolCallTimeoutMs: 30000"} {
		if !strings.Contains(imp.stdout, want) {
			t.Errorf("import lacks %q:\n%s", want, imp.stdout)
		}
	}
	prof := writeFile(t, dir, "figma.yaml", imp.stdout)
	run(t, nil, "-p", prof, "profile", "check").expect(t, ExitOK, "ok (10 plugin rows)", "")
	// The reference is shown as written, never resolved, by profile show.
	run(t, []string{"FIGMA_TOKEN=figd_live_secret"}, "-p", codex, "profile", "show").expect(t, ExitOK, "Bearer ${FIGMA_TOKEN}", "")

	vscode := writeFile(t, dir, "mcp.json", `{
	// comments are allowed
	"inputs": [{"type": "promptString", "id": "gh-pat", "password": true}],
	"servers": {"github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/",
		"headers": {"Authorization": "Bearer ${input:gh-pat}"}},},
}`)
	run(t, nil, "mcp", "import", "--from", "vscode", vscode).expect(t, ExitOK, "Bearer ${secret:gh-pat}", "becomes ${secret:gh-pat}")
	run(t, nil, "mcp", "import", "--from", "emacs", vscode).expect(t, ExitUsage, "", `unknown host "emacs"`)
}

// profile check reports everything statically wrong at once: a bad plugin setting, two
// MCP clients with one serverName in one scope (not across agent scopes), and a settings
// file that does not parse or validate, each with its file and key.
func TestProfileCheckReportsEverything(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	settings := writeFile(t, dir, "servers.yaml", "servers:\n  a:\n    transport: stdio\n    Command: x\n  b:\n    transport: streamable-http\n    url: ftp://example.com\n")
	p := writeFile(t, dir, "p.yaml", `extends: cli
plugins:
  one: {use: mcpclient, config: {serverName: gh, transport: stdio, command: x}}
  two: {use: mcpclient, config: {serverName: gh, transport: stdio, command: y}}
  three: {use: mcpclient, config: {serverName: other, transport: stdio, command: z, toolCallTimeoutMs: soon}}
  agent:
    plugins:
      gh-again: {use: mcpclient, config: {serverName: gh, transport: stdio, command: x}}
  manager: {use: mcpmanager, config: {settingsFile: `+settings+`}}
`)
	r := run(t, nil, "-p", p, "profile", "check")
	r.expect(t, ExitUsage, "", `key "plugins.three.config.toolCallTimeoutMs": expected an integer, got string`)
	for _, want := range []string{
		`profile "` + p + `": key "plugins.two.config.serverName": serverName "gh" is already used by plugins.one in the same scope`,
		`settings file "` + settings + `": line 4: key "servers.a.Command": unknown key (did you mean "command"?)`,
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "gh-again") {
		t.Errorf("a serverName reused in another agent scope is fine:\n%s", r.stderr)
	}
	// Once the file parses, its entries are validated too.
	fixed := writeFile(t, dir, "servers.yaml", "servers:\n  a:\n    transport: stdio\n    command: x\n  b:\n    transport: streamable-http\n    url: ftp://example.com\n")
	r = run(t, nil, "-p", p, "profile", "check")
	if !strings.Contains(r.stderr, `settings file "`+settings+`": line 7: key "servers.b.url": expected an http or https URL, got "ftp://example.com"`) {
		t.Errorf("settings entry not validated:\n%s", r.stderr)
	}
	// A project file layered on top is checked too, also in another host's dialect.
	project := writeFile(t, dir, "project.json", `{"mcpServers": {"p": {"command": "x", "args": [1]}}}`)
	withProject := writeFile(t, dir, "q.yaml", "extends: cli\nplugins:\n  manager: {use: mcpmanager, config: {settingsFile: "+fixed+", projectSettingsFile: "+project+"}}\n")
	r = run(t, nil, "-p", withProject, "profile", "check")
	if !strings.Contains(r.stderr, `settings file "`+project+`": key "mcpServers.p.args.0": expected a string, got a number`) {
		t.Errorf("project file not checked:\n%s", r.stderr)
	}
	// Other commands are not held back by what only profile check reports.
	ok := writeFile(t, dir, "ok.yaml", "extends: cli\nplugins:\n  one: {use: mcpclient, enabled: false, config: {serverName: gh, transport: stdio, command: x}}\n")
	run(t, nil, "-p", ok, "profile", "check").expect(t, ExitOK, "ok (9 plugin rows)", "")
}

// A profile's server expands ${VAR:-default} and ${secret:NAME} when it mounts (the demo
// server only starts when its argument resolved), while profile show prints the references
// as written; a missing secret fails that server alone, naming the key and the reference.
func TestProfileReferencesResolvedAtMount(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	if err := os.MkdirAll(filepath.Join(dir, "harness"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "harness"), "credentials.yaml", "demo-token: tok-0123456789abcdef\n")
	p := writeFile(t, dir, "p.yaml", `extends: cli
plugins:
  demo:
    use: mcpclient
    config:
      serverName: demo
      transport: stdio
      command: ${HARNESS_SELF}
      args: ["${HARNESS_TEST_DEMO_SUBCOMMAND:-demo-server}"]
      env: {DEMO_TOKEN: "${secret:demo-token}"}
`)
	r := run(t, nil, "-p", p, "tools", "list")
	r.expect(t, ExitOK, "mcp__demo__echo", "")
	show := run(t, nil, "-p", p, "profile", "show")
	show.expect(t, ExitOK, "DEMO_TOKEN: ${secret:demo-token}", "")
	if strings.Contains(show.stdout, "tok-0123456789abcdef") {
		t.Errorf("profile show resolved the secret:\n%s", show.stdout)
	}
	writeFile(t, filepath.Join(dir, "harness"), "credentials.yaml", "other: x\n")
	r = run(t, nil, "-p", p, "tools", "list")
	if !strings.Contains(r.stderr, `env.DEMO_TOKEN`) || !strings.Contains(r.stderr, `${secret:demo-token}: secret not found`) || strings.Contains(r.stdout, "mcp__demo__") {
		t.Errorf("missing secret: code %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}

// mcp probe of a profile row resolves its references as a mount would.
func TestProbeResolvesReferences(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv("HARNESS_TEST_DEMO_SUBCOMMAND", "demo-server")
	p := writeFile(t, dir, "p.yaml", `extends: cli
plugins:
  demo:
    use: mcpclient
    config: {serverName: demo, transport: stdio, command: "${HARNESS_SELF}", args: ["${HARNESS_TEST_DEMO_SUBCOMMAND}"]}
`)
	run(t, nil, "-p", p, "mcp", "probe", "demo").expect(t, ExitOK, "mcp__demo__echo", "")
	t.Setenv("HARNESS_TEST_DEMO_SUBCOMMAND", "")
	_ = os.Unsetenv("HARNESS_TEST_DEMO_SUBCOMMAND")
	r := run(t, nil, "-p", p, "mcp", "probe", "demo")
	if r.code == ExitOK || !strings.Contains(r.stdout+r.stderr, "${HARNESS_TEST_DEMO_SUBCOMMAND}: environment variable is not set") {
		t.Errorf("unset variable: code %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
