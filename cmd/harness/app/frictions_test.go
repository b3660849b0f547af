package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/plugins/mcpmanager"
)

// TestJSONKeepsHTMLCharacters: --json prints <, > and & as they are, also inside the
// server's own result (which the SDK encoded); an escaped backslash stays escaped.
func TestJSONKeepsHTMLCharacters(t *testing.T) {
	t.Parallel()
	r := run(t, nil, "tools", "call", "mcp__demo__echo", `{"text": "<a href=\"x\">&amp;</a> \\u003c"}`, "--json", "--local")
	r.expect(t, ExitOK, `<a href=\"x\">&amp;</a> \\u003c`, "")
	if strings.Contains(r.stdout, `\u003c`) && !strings.Contains(r.stdout, `\\u003c`) {
		t.Errorf("escaped:\n%s", r.stdout)
	}
}

// TestMCPListRejectedSettings: a settings file the manager rejects shows in mcp list, with
// the reason, and makes its exit status 1 (also with --json).
func TestMCPListRejectedSettings(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	dir := strings.TrimPrefix(env[1], "XDG_CONFIG_HOME=")
	writeSettings(t, dir, "servers:\n  bad: [unclosed\n")
	r := run(t, env, "mcp", "list", "--local")
	r.expect(t, ExitFailure, "user settings: ", "the settings file was rejected")
	run(t, env, "mcp", "list", "--local", "--json").expect(t, ExitFailure, `"error":`, "the settings file was rejected")
}

// writeSettings writes the user's settings file under the configuration directory dir.
func writeSettings(t *testing.T, dir, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "harness"), 0o700); err != nil {
		t.Fatal(err)
	}
	return writeFile(t, filepath.Join(dir, "harness"), "mcp-servers.yaml", content)
}

// TestMCPListKeepsProfileOrder: in process, the profile's own servers are listed in the
// profile's order, not in the order they happened to connect.
func TestMCPListKeepsProfileOrder(t *testing.T) {
	t.Parallel()
	self := selfCmd(t)
	r := run(t, nil, "--stdio", "zz="+self, "--stdio", "aa="+self, "--stdio", "mm="+self, "mcp", "list", "--local")
	r.expect(t, ExitOK, "zz", "")
	z, a, m := strings.Index(r.stdout, "\nzz "), strings.Index(r.stdout, "\naa "), strings.Index(r.stdout, "\nmm ")
	if d := strings.Index(r.stdout, "\ndemo "); !(d < z && z < a && a < m) {
		t.Errorf("not in the profile's order (demo, zz, aa, mm):\n%s", r.stdout)
	}
}

// TestSetReachesAdhocRows: --set addresses the rows of --stdio and --http servers like
// the profile's own.
func TestSetReachesAdhocRows(t *testing.T) {
	t.Parallel()
	r := run(t, nil, "--stdio", "x="+selfCmd(t), "--http", "y=http://127.0.0.1:1/mcp", "--set", "plugins.x.config.toolCallTimeoutMs=1234",
		"--set", "plugins.y.config.headers={X-Extra: yes}", "--set", "plugins.X.config.env.FOO=bar", "profile", "show")
	r.expect(t, ExitOK, "toolCallTimeoutMs: 1234", "")
	r.expect(t, ExitOK, "X-Extra:", "")
	r.expect(t, ExitOK, "FOO:", "")
	r = run(t, nil, "--stdio", "x="+selfCmd(t), "--set", "plugins.x.enabled=false", "tools", "list", "--local")
	if r.code != ExitOK || strings.Contains(r.stdout, "mcp__x__") {
		t.Errorf("plugins.x.enabled=false: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	run(t, nil, "--stdio", "x="+selfCmd(t), "--set", "plugins.x.use=other", "profile", "show").expect(t, ExitUsage, "", "plugins.x.config.KEY")
}

// TestHelpListsGlobalFlagsOnce: a command's help names the global flags in one line
// (the program's help lists them), and the commands people start with have examples.
func TestHelpListsGlobalFlagsOnce(t *testing.T) {
	t.Parallel()
	r := run(t, nil, "tools", "call", "--help")
	r.expect(t, ExitOK, `Global flags (-p/--profile, --set, --stdio, --http, --env, --elicitation, --log-*, --*-timeout): see "harness --help".`, "")
	if strings.Contains(r.stdout, "--startup-timeout duration") {
		t.Errorf("the global flags are repeated:\n%s", r.stdout)
	}
	run(t, nil, "--help").expect(t, ExitOK, "--startup-timeout duration", "")
	for _, cmd := range [][]string{{"tools", "call"}, {"mcp", "add"}, {"serve"}, {"run"}, {"chat"}, {"ask"}} {
		run(t, nil, append(cmd, "--help")...).expect(t, ExitOK, "Examples:\n  harness ", "")
	}
}

// TestMCPGetShowsReferencesWithText: a value made of references and plain text is shown
// as written; a literal that may be a secret is not.
func TestMCPGetShowsReferencesWithText(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	run(t, env, "mcp", "add", "mem", "--env", "MEMORY_FILE=${HOME}/.local/share/mem.json", "--env", "API=ghp_0123456789abcdef",
		"--", "/bin/true").expect(t, ExitOK, "mem", "")
	r := run(t, env, "mcp", "get", "mem")
	r.expect(t, ExitOK, "${HOME}/.local/share/mem.json", "")
	if strings.Contains(r.stdout, "ghp_0123456789abcdef") {
		t.Errorf("a literal secret is shown:\n%s", r.stdout)
	}
}

// TestStopStatusWithoutLastError: the status line of a server that stops, is disabled or
// removed does not repeat its last error.
func TestStopStatusWithoutLastError(t *testing.T) {
	t.Parallel()
	for _, ch := range []mcpmanager.StatusChange{
		{Name: "x", Removed: true, Status: mcpmanager.View{Name: "x", Status: mcpmanager.StateFailed, Error: "boom"}},
		{Name: "x", Status: mcpmanager.View{Name: "x", Status: mcpmanager.StateStopping, Error: "boom", StderrTail: "trace"}},
		{Name: "x", Status: mcpmanager.View{Name: "x", Status: mcpmanager.StateDisabled, Error: "boom"}},
	} {
		if line := host.StatusLine(host.ViewStatus(ch)); strings.Contains(line, "boom") || strings.Contains(line, "trace") {
			t.Errorf("%s", line)
		}
	}
	failed := mcpmanager.StatusChange{Name: "x", Status: mcpmanager.View{Name: "x", Status: mcpmanager.StateFailed, Error: "boom"}}
	if line := host.StatusLine(host.ViewStatus(failed)); !strings.Contains(line, "boom") {
		t.Errorf("a failure without its error: %s", line)
	}
}
