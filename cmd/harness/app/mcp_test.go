package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/plugins/mcpmanager"
	"github.com/cordisgo/harness/plugins/remote"
)

// noHost is the --local flag, so that the mcp commands never answer for a host
// running on the machine.
func noHost(*testing.T) []string { return []string{"--local"} }

func TestMCPListInProcess(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "no-such-server")
	r := run(t, nil, append([]string{"--stdio", "bad=" + missing, "mcp", "list"}, noHost(t)...)...)
	r.expect(t, ExitOK, "NAME       STATUS", "")
	// The built-in profile's agent brings the workspace, listed without starting (lazy).
	for _, want := range []string{"demo       connected  stdio      8", "bad        failed     stdio      0      connect: fork/exec ",
		"workspace  lazy       stdio      9      workspace "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("mcp list lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stderr, "harness: mcp server") || strings.Contains(r.stderr, "mcp server failed") {
		t.Errorf("the list's statuses are repeated on stderr:\n%s", r.stderr)
	}
	// The whole cause, however long: not cut off the table, and wrapped to the width.
	if !strings.Contains(r.stdout, "no such file or directory — it cannot start this way") {
		t.Errorf("the cause is cut:\n%s", r.stdout)
	}
	// (Without the manager: its settings files' paths, which cannot wrap, are not shown.)
	r = run(t, []string{"COLUMNS=70"}, append([]string{"--set", "plugins.manager.enabled=false", "--stdio", "bad=" + missing, "mcp", "list"}, noHost(t)...)...)
	var cause strings.Builder
	for _, line := range strings.Split(strings.TrimRight(r.stdout, "\n"), "\n") {
		if utf8.RuneCountInString(line) > 70 {
			t.Errorf("line longer than COLUMNS=70: %q", line)
		}
		if strings.HasPrefix(line, "bad ") || strings.HasPrefix(line, "    ") {
			cause.WriteString(strings.TrimSpace(line[strings.Index(line, "  0  ")+5:]) + " ")
		}
	}
	if joined := strings.ReplaceAll(cause.String(), " ", ""); !strings.Contains(joined, "thenrestarttheserver") || !strings.Contains(joined, missing) {
		t.Errorf("the wrapped cause is not whole: %q\n%s", cause.String(), r.stdout)
	}

	// --json: the configuration, secrets redacted.
	secret := writeFile(t, t.TempDir(), "s.yaml", "extends: default\nplugins:\n  tok:\n    use: mcpclient\n    config: {serverName: tok, transport: stdio, command: "+missing+", env: {API_TOKEN: s3cr3t-value}}\n")
	r = run(t, nil, append([]string{"-p", secret, "mcp", "list", "--json"}, noHost(t)...)...)
	r.expect(t, ExitOK, `"name": "tok"`, "")
	if strings.Contains(r.stdout, "s3cr3t-value") || !strings.Contains(r.stdout, "API_TOKEN") {
		t.Errorf("mcp list --json does not redact the token:\n%s", r.stdout)
	}
	var l host.ServerList
	if err := json.Unmarshal([]byte(r.stdout), &l); err != nil || len(l.Servers)+len(l.Unmanaged) != 3 { // demo, tok, workspace
		t.Fatalf("mcp list --json: %v\n%s", err, r.stdout)
	}

	// A client whose scope failed before it reported (a server name that
	// another row took) is listed with the scope's error.
	p := writeFile(t, t.TempDir(), "p.yaml", "extends: default\nplugins:\n  twin:\n    use: mcpclient\n    config: {serverName: demo, transport: stdio, command: "+missing+"}\n")
	r = run(t, nil, append([]string{"-p", p, "mcp", "list"}, noHost(t)...)...)
	r.expect(t, ExitOK, "serverName is already used", "") // by whichever row mounted first
	if !strings.Contains(r.stdout, "failed") {
		t.Errorf("the failed row is not listed as such:\n%s", r.stdout)
	}
}

func TestMCPProbe(t *testing.T) {
	t.Parallel()
	r := run(t, nil, append([]string{"mcp", "probe", "demo"}, noHost(t)...)...)
	r.expect(t, ExitOK, "demo: ok in ", "")
	for _, want := range []string{"over stdio", "8 tools", "mcp__demo__echo      yes"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("probe lacks %q:\n%s", want, r.stdout)
		}
	}
	r = run(t, nil, append([]string{"mcp", "probe", "demo", "--json"}, noHost(t)...)...)
	r.expect(t, ExitOK, `"stage": "ok"`, "")
	if !strings.Contains(r.stdout, `"outcome": "closed"`) {
		t.Errorf("probe --json:\n%s", r.stdout)
	}

	// A failing server: exit 1, the stage and the error; a secret in its
	// configuration is never printed.
	missing := filepath.Join(t.TempDir(), "no-such-server")
	secret := writeFile(t, t.TempDir(), "s.yaml", "extends: default\nplugins:\n  bad:\n    use: mcpclient\n    config: {serverName: bad, transport: stdio, command: "+missing+", env: {API_TOKEN: s3cr3t-env}}\n")
	r = run(t, nil, append([]string{"-p", secret, "mcp", "probe", "bad"}, noHost(t)...)...)
	r.expect(t, ExitFailure, "bad: failed at connect after ", "")
	if !strings.Contains(r.stdout, "no-such-server") || strings.Contains(r.stdout+r.stderr, "s3cr3t-env") {
		t.Errorf("probe of a failing server:\n%s\n%s", r.stdout, r.stderr)
	}
	run(t, nil, append([]string{"--stdio", "bad=" + missing, "mcp", "probe", "bad", "--json"}, noHost(t)...)...).
		expect(t, ExitFailure, `"stage": "connect"`, "probe of bad failed at connect")

	run(t, nil, append([]string{"mcp", "probe", "nosuch"}, noHost(t)...)...).
		expect(t, ExitFailure, "", `no MCP server "nosuch" in profile "default"; known: demo, workspace`)
	run(t, nil, append([]string{"-p", "cli", "--set", "plugins.agent.enabled=false", "mcp", "probe", "demo"}, noHost(t)...)...).
		expect(t, ExitFailure, "", `no MCP server "demo" in profile "cli": it has no MCP servers`)
	run(t, nil, "mcp", "probe").expect(t, ExitUsage, "", "harness: mcp probe: name the MCP server (usage: harness mcp probe NAME)")
	run(t, nil, "mcp", "restart", "a", "b").expect(t, ExitUsage, "", "harness: mcp restart: one MCP server at a time, got 2 names (usage: harness mcp restart NAME)")
}

func TestMCPRestartInProcess(t *testing.T) {
	t.Parallel()
	run(t, nil, append([]string{"mcp", "restart", "demo"}, noHost(t)...)...).expect(t, ExitOK, "demo: restarted: connected (8 tools)\n", "")
	demo := demoHTTP(t)
	r := run(t, nil, append(append(demo, "mcp", "restart", "demo", "--json"), noHost(t)...)...)
	r.expect(t, ExitOK, `"status": "connected"`, "")
	run(t, nil, append(append(demo, "mcp", "restart", "nosuch"), noHost(t)...)...).expect(t, ExitFailure, "", `no MCP server "nosuch"`)
}

// TestMCPAgainstRunningHost: with an endpoint file whose host answers, the
// commands go to that host; a host without a manager is reported as such,
// and a stale endpoint file falls back to working in process.
func TestMCPAgainstRunningHost(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	token := filepath.Join(dir, "remote.token")
	s := ctxtest.MountActive(t, ctxtest.New(t), remote.Plugin, map[string]any{"tokenFile": token})
	endpoint := remote.EndpointFileFor(token)
	run(t, nil, "mcp", "list", "--endpoint", endpoint).expect(t, ExitFailure, "", "serves neither harness/mcpList nor mcpManager/list")
	run(t, nil, "mcp", "restart", "demo", "--endpoint", endpoint).expect(t, ExitFailure, "", "use --local")
	// --local ignores the host.
	run(t, nil, "mcp", "list", "--endpoint", endpoint, "--local").expect(t, ExitOK, "demo       connected", "")

	// A stale endpoint: the host is gone.
	stale := filepath.Join(dir, "stale.endpoint.json")
	data, err := os.ReadFile(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(token, []byte(strings.Repeat("ab", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, data, 0o600); err != nil {
		t.Fatal(err)
	}
	// Named explicitly, a host that does not answer is an error, not an answer from this
	// process.
	run(t, nil, "mcp", "list", "--endpoint", stale).expect(t, ExitFailure, "", "no running host: no running host answers at http://127.0.0.1:")
}

// TestMCPWithManagerInProcess: on the web profile, the mcp commands use the
// manager mounted in process.
func TestMCPWithManagerInProcess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	url := demoURL(t)
	settings := writeFile(t, dir, "mcp-servers.yaml", `servers:
  managed:
    transport: streamable-http
    url: `+url+`
    headers: {Authorization: "Bearer s3cr3t-managed"}
`)
	web := []string{"-p", "web", "--set", "plugins.demo.enabled=false",
		"--set", "plugins.manager.config.settingsFile=" + settings,
		"--set", "plugins.remote.config.tokenFile=" + filepath.Join(dir, "remote.token")}
	r := run(t, nil, append(web, "mcp", "list", "--local")...)
	r.expect(t, ExitOK, "managed    connected  streamable-http  8", "")
	r = run(t, nil, append(web, "mcp", "list", "--local", "--json")...)
	r.expect(t, ExitOK, `"source": "settings"`, "")
	if strings.Contains(r.stdout, "s3cr3t-managed") {
		t.Errorf("mcp list --json leaks the token:\n%s", r.stdout)
	}
	run(t, nil, append(web, "mcp", "probe", "managed", "--local")...).expect(t, ExitOK, "managed: ok in ", "")
	run(t, nil, append(web, "mcp", "restart", "managed", "--local")...).expect(t, ExitOK, "managed: restarted: connected", "")
	run(t, nil, append(web, "mcp", "restart", "nosuch", "--local")...).expect(t, ExitFailure, "", "nosuch")
	run(t, nil, append(web, "tools", "list")...).expect(t, ExitOK, "mcp__managed__echo", "")

	// The profile's own client rows are listed next to the manager's servers, and can be
	// restarted by name.
	withDemo := append(slices.Clone(web[:2]), web[4:]...)
	r = run(t, nil, append(withDemo, "mcp", "list", "--local")...)
	r.expect(t, ExitOK, "managed    connected  streamable-http  8", "")
	r.expect(t, ExitOK, "demo       connected  stdio            8", "")
	r = run(t, nil, append(withDemo, "mcp", "list", "--local", "--json")...)
	var l struct {
		Servers   []mcpmanager.View `json:"servers"`
		Unmanaged []mcpmanager.View `json:"unmanaged"`
		Version   uint64            `json:"version"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &l); err != nil || len(l.Servers) != 1 || len(l.Unmanaged) != 2 ||
		l.Unmanaged[0].Name != "demo" || l.Unmanaged[1].Name != "workspace" || l.Unmanaged[1].Status != "lazy" || l.Version == 0 {
		t.Errorf("mcp list --json: %v\n%s", err, r.stdout)
	}
	run(t, nil, append(withDemo, "mcp", "restart", "demo", "--local")...).expect(t, ExitOK, "demo: restarted: connected", "")
}
