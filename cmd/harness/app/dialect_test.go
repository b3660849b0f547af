package app

import (
	"strings"
	"testing"
)

// Other hosts' documents are read directly by -p and converted by mcp import --from; keys
// without a counterpart are warned about on stderr, not fatal.
func TestOtherHostsDocuments(t *testing.T) {
	dir := t.TempDir()
	cline := writeFile(t, dir, "cline_mcp_settings.json", `{"mcpServers": {
  "fetch": {"command": "uvx", "args": ["mcp-server-fetch"], "autoApprove": ["fetch"], "timeout": 60},
  "off": {"command": "x", "disabled": true}}}`)
	r := run(t, nil, "-p", cline, "profile", "check")
	r.expect(t, ExitOK, "ok (4 plugin rows)", `warning: key "mcpServers.fetch.autoApprove": ignored`)
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
	run(t, nil, "-p", prof, "profile", "check").expect(t, ExitOK, "ok (4 plugin rows)", "")
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
