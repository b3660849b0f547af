package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPAddRemoveGetEnable: the settings file is edited in place — comments, key order and
// mode kept —, a change that does not validate leaves the file untouched, and get shows
// the entry with values redacted.
func TestMCPAddRemoveGetEnable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := []string{"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"), "HOME=" + dir}
	file := filepath.Join(dir, "config", "harness", "mcp-servers.yaml")
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	orig := "# my servers\nservers:\n  # the first one\n  zeta:\n    transport: stdio\n    command: /bin/true # keep this\n"
	if err := os.WriteFile(file, []byte(orig), 0o640); err != nil {
		t.Fatal(err)
	}
	run(t, env, "mcp", "add", "mem", "--env", "API_KEY=s3cr3t", "--env", "REF=${secret:mem}", "--", "npx", "-y", "@modelcontextprotocol/server-memory").
		expect(t, ExitOK, "mem: added to "+file+" (user settings)", "")
	run(t, env, "mcp", "add", "docs", "--url", "https://example.com/mcp", "--header", "Authorization=Bearer tok-123").expect(t, ExitOK, "docs: added", "")
	got := read(t, file)
	for _, want := range []string{"# my servers", "# the first one", "# keep this", "API_KEY: s3cr3t", "args: [-y, '@modelcontextprotocol/server-memory']", "url: https://example.com/mcp"} {
		if !strings.Contains(got, want) {
			t.Errorf("the file lacks %q:\n%s", want, got)
		}
	}
	if z, m, d := strings.Index(got, "zeta:"), strings.Index(got, "mem:"), strings.Index(got, "docs:"); !(z < m && m < d) {
		t.Errorf("key order not kept:\n%s", got)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("mode after the edit: %v %v", fi.Mode(), err)
	}

	// Validated with the manager's decoder before writing: a bad entry is refused, the file
	// stays as it was.
	before := read(t, file)
	r := run(t, env, "mcp", "add", "bad", "--url", "ftp://example.com/")
	r.expect(t, ExitFailure, "", `not written: the change does not validate: settings file "`+file+`": line `)
	r.expect(t, ExitFailure, "", `"servers.bad.url": expected an http or https URL`)
	if read(t, file) != before {
		t.Errorf("a refused change was written")
	}
	run(t, env, "mcp", "add", "mem", "--", "x").expect(t, ExitFailure, "", `mcp server "mem" is already in `)
	run(t, env, "mcp", "add", "x").expect(t, ExitUsage, "", "expected a command after --")
	if ents, _ := os.ReadDir(filepath.Dir(file)); len(ents) != 1 {
		t.Errorf("temporary files left behind: %v", ents)
	}

	r = run(t, env, "mcp", "get", "mem")
	r.expect(t, ExitOK, "mem (user settings, "+file+")", "")
	r.expect(t, ExitOK, "REF: ${secret:mem}", "")
	if strings.Contains(r.stdout, "s3cr3t") {
		t.Errorf("mcp get shows a secret value:\n%s", r.stdout)
	}
	r = run(t, env, "mcp", "get", "docs", "--json")
	var g struct{ Name, Scope, File string }
	if err := json.Unmarshal([]byte(r.stdout), &g); err != nil || g.Name != "docs" || g.Scope != "user" || strings.Contains(r.stdout, "tok-123") {
		t.Errorf("mcp get --json: %v\n%s", err, r.stdout)
	}
	run(t, env, "mcp", "disable", "mem").expect(t, ExitOK, "mem: disabled in ", "")
	if !strings.Contains(read(t, file), "enabled: false") {
		t.Errorf("not disabled:\n%s", read(t, file))
	}
	run(t, env, "mcp", "enable", "mem").expect(t, ExitOK, "mem: enabled in ", "")
	if strings.Contains(read(t, file), "enabled:") {
		t.Errorf("not enabled:\n%s", read(t, file))
	}
	run(t, env, "mcp", "remove", "mme").expect(t, ExitFailure, "", `no MCP server "mme" in `)
	run(t, env, "mcp", "remove", "mme").expect(t, ExitFailure, "", `(did you mean "mem"?)`)
	run(t, env, "mcp", "remove", "mem").expect(t, ExitOK, "mem: removed from "+file, "")
	if got := read(t, file); strings.Contains(got, "mem:") || !strings.Contains(got, "# keep this") {
		t.Errorf("after remove:\n%s", got)
	}
}

// TestMCPAddJSONSettings: a JSON settings file stays JSON, in its key order.
func TestMCPAddJSONSettings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := writeFile(t, dir, "servers.json", `{"servers": {"b": {"transport": "stdio", "command": "/bin/true", "args": ["1"]}, "a": {"transport": "stdio", "command": "/bin/true"}}}`)
	p := writeFile(t, dir, "p.yaml", "extends: cli\nplugins:\n  manager:\n    use: mcpmanager\n    config:\n      settingsFile: "+file+"\n")
	run(t, nil, "-p", p, "mcp", "add", "c", "--", "/bin/true", "--flag").expect(t, ExitOK, "c: added to "+file, "")
	got := read(t, file)
	if !json.Valid([]byte(got)) {
		t.Fatalf("not JSON any more:\n%s", got)
	}
	if b, a, c := strings.Index(got, `"b"`), strings.Index(got, `"a"`), strings.Index(got, `"c"`); !(b < a && a < c) || !strings.Contains(got, `"--flag"`) {
		t.Errorf("order or content lost:\n%s", got)
	}
}

// TestSettingsLayersAndHotReload: the settings files default to the user's configuration
// directory and the project's .harness directory (project wins per name), mcp list says
// where they are, and a running host starts a server that mcp add wrote.
func TestSettingsLayersAndHotReload(t *testing.T) {
	dir := t.TempDir()
	project := filepath.Join(dir, "repo")
	sub := filepath.Join(project, "src", "pkg")
	if err := os.MkdirAll(filepath.Join(project, ".harness"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub) // the project file is found in the nearest ancestor that has one
	env := []string{"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"), "HOME=" + dir}
	user := filepath.Join(dir, "config", "harness", "mcp-servers.yaml")
	projectFile := filepath.Join(project, ".harness", "mcp-servers.yaml")
	run(t, env, "mcp", "add", "both", "--", "/bin/true").expect(t, ExitOK, "both: added to "+user, "")
	run(t, env, "mcp", "add", "both", "--scope", "project", "--", "/bin/false").expect(t, ExitOK, "both: added to "+projectFile+" (project settings)", "")
	run(t, env, "mcp", "disable", "both", "--scope", "project").expect(t, ExitOK, "both: disabled in "+projectFile, "")
	web := []string{"-p", "web", "--set", "plugins.demo.enabled=false"}
	r := run(t, env, append(web, "mcp", "list", "--local")...)
	r.expect(t, ExitOK, "both       disabled", "")
	r.expect(t, ExitOK, "user settings: "+user, "")
	r.expect(t, ExitOK, "project settings: "+projectFile, "")
	run(t, env, "mcp", "get", "both").expect(t, ExitOK, "both (project settings, ", "")

	// A running host picks an added server up by its hot reload.
	host := startHost(t, env, "web")
	added := host.waitFor("added: connected (8 tools)")
	run(t, env, "mcp", "add", "added", "--url", demoURL(t)).expect(t, ExitOK, "added: added to "+user, "")
	select {
	case <-added:
	case <-t.Context().Done():
		t.Fatalf("the host did not start the added server:\n%s", host.String())
	}
	run(t, env, "mcp", "list").expect(t, ExitOK, "added      connected", "answering for the host")
}

// TestAdhocStdioEnv: --env sets the environment of the ad-hoc --stdio servers.
func TestAdhocStdioEnv(t *testing.T) {
	t.Parallel()
	r := run(t, nil, "--stdio", "e=/bin/true", "--env", "MY_SETTING=on", "profile", "show")
	r.expect(t, ExitOK, "MY_SETTING:", "")
	run(t, nil, "--stdio", "e=/bin/true", "--env", "novalue", "profile", "show").expect(t, ExitUsage, "", `--env "novalue": expected KEY=VALUE`)
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
