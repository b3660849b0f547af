package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/profiles"
)

func TestVersion(t *testing.T) {
	t.Parallel()
	r := run(t, nil, "version")
	r.expect(t, ExitOK, "harness ", "")
	if !strings.Contains(r.stdout, "go1.") {
		t.Errorf("version %q does not name the toolchain", r.stdout)
	}
	o := testOptions()
	o.Name, o.Version = "myharness", "v9.9.9"
	runWith(t, context.Background(), o, "", nil, "version").expect(t, ExitOK, "myharness v9.9.9 ", "")
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
		cmd  string // the command the usage hint names
	}{
		{nil, "harness: expected a command: ask, audit, chat, demo-server, mcp, open, profile, prompt, prompts, resources, run, serve, sessions, tools, version, workspace-server\n", "harness"},
		{[]string{"frobnicate"}, `harness: unknown command "frobnicate"; expected one of: ask, audit, chat, `, "harness"},
		{[]string{"tols"}, `harness: unknown command "tols" (did you mean "tools"?); expected one of: `, "harness"},
		{[]string{"mcp", "lst"}, `harness: mcp: unknown command "lst" (did you mean "list"?); expected one of: add, `, "harness mcp"},
		{[]string{"--frobnicate", "version"}, "harness: unknown flag: --frobnicate\n", "harness"},
		{[]string{"--profle", "x", "version"}, `harness: unknown flag: --profle (did you mean "--profile"?)`, "harness version"},
		{[]string{"version", "extra"}, `harness: version: takes no arguments, got "extra"`, "harness version"},
		{[]string{"-p"}, "flag needs an argument", "harness"},
		{[]string{"--startup-timeout", "soon", "version"}, "invalid argument \"soon\"", "harness version"},
		{[]string{"--log-level", "loud", "version"}, `--log-level "loud": expected debug, info, warn or error`, "harness version"},
		{[]string{"--log-format", "xml", "version"}, `--log-format "xml": expected text or json`, "harness version"},
		{[]string{"profile"}, "harness: profile: expected a subcommand: check, show", "harness profile"},
		{[]string{"profile", "show", "extra"}, `harness: profile show: takes no arguments, got "extra"`, "harness profile show"},
		{[]string{"mcp"}, "harness: mcp: expected a subcommand: add, ", "harness mcp"},
		{[]string{"mcp", "import"}, "accepts 1 arg(s), received 0", "harness mcp import"},
		{[]string{"tools", "call"}, "harness: tools call: accepts between 1 and 2 arg(s), received 0 (usage: harness tools call NAME [JSON])\n", "harness tools call"},
		{[]string{"tools", "call", "not a name"}, `"not a name" is not a tool name`, "harness tools call"},
		{[]string{"tools", "call", "greet", "{bad"}, "arguments must be a JSON object", "harness tools call"},
		{[]string{"tools", "call", "greet", "[1]"}, "arguments must be a JSON object", "harness tools call"},
		{[]string{"tools", "list", "--jsn"}, `unknown flag: --jsn (did you mean "--json"?)`, "harness tools list"},
		{[]string{"serve", "--port", "0"}, `unknown flag: --port (did you mean "--addr"? it takes HOST:PORT)`, "harness serve"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := run(t, nil, tc.args...)
			r.expect(t, ExitUsage, "", tc.want)
			if hint := "harness: run '" + tc.cmd + " --help' for usage\n"; !strings.HasSuffix(r.stderr, hint) {
				t.Errorf("stderr %q does not end with the usage hint %q", r.stderr, hint)
			}
			if r.stdout != "" {
				t.Errorf("stdout = %q, want nothing", r.stdout)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	r := run(t, nil, "--help")
	r.expect(t, ExitOK, "Exit status", "")
	for _, cmd := range []string{"run", "tools", "mcp", "profile", "demo-server", "version"} {
		if !strings.Contains(r.stdout, cmd) {
			t.Errorf("help does not list %s", cmd)
		}
	}
	run(t, nil, "tools", "call", "--help").expect(t, ExitOK, "exits with status 1", "")
}

func TestProfileShowRedactsSecrets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := writeFile(t, dir, "p.yaml", `description: secrets
extends: cli
plugins:
  gh:
    use: mcpclient
    config:
      serverName: gh
      transport: stdio
      command: github-mcp-server
      env:
        GITHUB_TOKEN: ghp_supersecret1
  api:
    use: mcpclient
    config:
      serverName: api
      transport: streamable-http
      url: https://user:pa55word@example.com/mcp?api_key=k3y
      headers:
        Authorization: Bearer sekrit2
`)
	env := []string{"HARNESS_PLUGINS__GH__CONFIG__ENV__EXTRA_TOKEN=fromenv3"}
	r := run(t, env, "-p", p, "--set", "plugins.api.config.toolCallTimeoutMs=5000", "--stdio", "adhoc=my-server --token 'plain arg'", "profile", "show")
	r.expect(t, ExitOK, "[redacted]", "")
	for _, secret := range []string{"ghp_supersecret1", "pa55word", "k3y", "sekrit2", "fromenv3"} {
		if strings.Contains(r.stdout, secret) {
			t.Errorf("profile show leaks %q:\n%s", secret, r.stdout)
		}
	}
	for _, want := range []string{"GITHUB_TOKEN:", "EXTRA_TOKEN:", "Authorization:", "toolCallTimeoutMs: 5000", "use: toolregistry", "adhoc:", "- plain arg"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("profile show lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestProfileShowDefault(t *testing.T) {
	t.Parallel()
	r := run(t, nil, "profile", "show")
	r.expect(t, ExitOK, "demo-server", "")
	self, _ := os.Executable()
	if !strings.Contains(r.stdout, self) {
		t.Errorf("${HARNESS_SELF} not expanded to %s:\n%s", self, r.stdout)
	}
	// The dump is a profile: it loads again.
	again := writeFile(t, t.TempDir(), "again.yaml", r.stdout)
	run(t, nil, "-p", again, "profile", "check").expect(t, ExitOK, "ok (10 plugin rows)", "")
	for _, name := range profiles.BuiltinNames() {
		run(t, nil, "-p", name, "profile", "check").expect(t, ExitOK, "ok", "")
	}
}

func TestProfileCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := func(name, content string) string { return writeFile(t, dir, name, content) }
	cycleA := file("cycle-a.yaml", "extends: ./cycle-b.yaml\nplugins: {}\n")
	file("cycle-b.yaml", "extends: ./cycle-a.yaml\nplugins: {}\n")
	good := file("good.yaml", "extends: cli\nplugins:\n  s:\n    use: teststrict\n    config: {count: 1}\n")

	for _, tc := range []struct {
		name    string
		profile string   // file content; "" uses good.yaml
		path    string   // a profile name or path instead of content
		args    []string // extra global flags
		env     []string
		want    []string // substrings of the message
	}{
		{name: "unknown plugin", profile: "plugins:\n  x:\n    use: nope\n",
			want: []string{`key "plugins.x.use"`, `unknown plugin "nope"`}},
		{name: "unknown plugin nested", profile: "plugins:\n  agent:\n    plugins:\n      x:\n        use: nope\n",
			want: []string{`key "plugins.agent.plugins.x.use"`, `unknown plugin "nope"`}},
		{name: "unknown top-level key", profile: "plugin:\n  x: {use: toolregistry}\n",
			want: []string{`key "plugin"`, "unknown key"}},
		{name: "unknown row key", profile: "plugins:\n  x:\n    use: toolregistry\n    confg: {}\n",
			want: []string{`key "plugins.x.confg"`, "plugin settings go under config"}},
		{name: "enabled not a boolean", profile: "plugins:\n  x:\n    use: toolregistry\n    enabled: \"yes\"\n",
			want: []string{`line 4: key "plugins.x.enabled"`, "expected a boolean"}},
		{name: "use not a string", profile: "plugins:\n  x:\n    use: 5\n",
			want: []string{`key "plugins.x.use"`, "expected the name of a plugin"}},
		{name: "config not a map", profile: "plugins:\n  x:\n    use: toolregistry\n    config: 5\n",
			want: []string{`key "plugins.x.config"`, "expected a map"}},
		{name: "row neither plugin nor scope", profile: "plugins:\n  x:\n    enabled: true\n",
			want: []string{`key "plugins.x"`, `missing key "use"`}},
		{name: "bad row id", profile: "plugins:\n  \"bad id\":\n    use: toolregistry\n",
			want: []string{"bad id"}},
		{name: "duplicate key", profile: "plugins:\n  x:\n    use: toolregistry\n  x:\n    use: sysprompt\n",
			want: []string{"x"}},
		{name: "yaml syntax", profile: "plugins: [\n",
			want: []string{"line"}},
		{name: "missing extends", profile: "extends: nosuch\nplugins: {}\n",
			want: []string{"nosuch"}},
		{name: "extends cycle", path: cycleA,
			want: []string{"cycle"}},
		{name: "missing file", path: filepath.Join(dir, "missing.yaml"),
			want: []string{"missing.yaml"}},
		{name: "plugin config unknown key", profile: "plugins:\n  s:\n    use: teststrict\n    config: {cuont: 1}\n",
			want: []string{`key "plugins.s.config.cuont"`, "unknown key"}},
		{name: "plugin config wrong type", profile: "plugins:\n  s:\n    use: teststrict\n    config: {count: many}\n",
			want: []string{`key "plugins.s.config.count"`, "expected an integer"}},
		{name: "plugin config list expected", profile: "plugins:\n  s:\n    use: teststrict\n    config: {tags: solo}\n",
			want: []string{`key "plugins.s.config.tags"`, "expected a list"}},
		{name: "plugin config map expected", profile: "plugins:\n  s:\n    use: teststrict\n    config: {limits: [1]}\n",
			want: []string{`key "plugins.s.config.limits"`, "expected a map"}},
		{name: "plugin config invalid", profile: "plugins:\n  s:\n    use: teststrict\n    config: {count: -1}\n",
			want: []string{`key "plugins.s.config"`, "count must not be negative"}},
		{name: "plugin config in nested row", profile: "plugins:\n  agent:\n    plugins:\n      s:\n        use: teststrict\n        config: {count: x}\n",
			want: []string{`key "plugins.agent.plugins.s.config.count"`}},
		{name: "mcpclient missing transport", profile: "plugins:\n  gh:\n    use: mcpclient\n    config: {serverName: gh, command: x}\n",
			want: []string{`key "plugins.gh.config.transport"`, "required"}},
		{name: "mcpclient bad server name", profile: "plugins:\n  gh:\n    use: mcpclient\n    config: {serverName: \"g h\", transport: stdio, command: x}\n",
			want: []string{`key "plugins.gh.config.serverName"`}},
		{name: "mcpclient unknown key", profile: "plugins:\n  gh:\n    use: mcpclient\n    config: {serverName: gh, transport: stdio, cmd: x}\n",
			want: []string{`key "plugins.gh.config.cmd"`, "unknown key"}},
		{name: "mcpclient several problems", profile: "plugins:\n  gh:\n    use: mcpclient\n    config: {serverName: gh, transport: stdio, toolCallTimeoutMs: 0}\n",
			want: []string{`key "plugins.gh.config.command"`, `key "plugins.gh.config.toolCallTimeoutMs"`}},
		{name: "set without equals", args: []string{"--set", "plugins.s.enabled"},
			want: []string{"--set"}},
		{name: "set wrong type", args: []string{"--set", "plugins.s.enabled=maybe"},
			want: []string{`key "plugins.s.enabled"`, "expected a boolean"}},
		{name: "set bad plugin config", args: []string{"--set", "plugins.s.config.count=lots"},
			want: []string{`key "plugins.s.config.count"`, "expected an integer"}},
		{name: "env wrong type", env: []string{"HARNESS_PLUGINS__S__ENABLED=maybe"},
			want: []string{"HARNESS_PLUGINS__S__ENABLED", "expected a boolean"}},
		{name: "stdio without name", args: []string{"--stdio", "npx server"},
			want: []string{`--stdio "npx server": expected NAME=CMDLINE`}},
		{name: "stdio bad name", args: []string{"--stdio", "my server=npx"},
			want: []string{`server name "my server"`}},
		{name: "stdio unterminated quote", args: []string{"--stdio", "fs=npx 'server"},
			want: []string{`--stdio "fs=npx 'server"`, "unterminated single quote"}},
		{name: "stdio empty command", args: []string{"--stdio", "fs=  "},
			want: []string{"empty command line"}},
		{name: "stdio name taken by profile", args: []string{"--stdio", "tools=x"},
			want: []string{`name "tools" is already used by the profile's row "tools"`}},
		{name: "stdio name given twice", args: []string{"--stdio", "a=x", "--http", "A=http://h/mcp"},
			want: []string{`name "A" is already used by --stdio a`}},
		{name: "http without name", args: []string{"--http", "http://localhost/mcp"},
			want: []string{"expected NAME=URL"}},
		{name: "http bad url", args: []string{"--http", "web=ftp://example.com"},
			want: []string{`--http web=ftp://example.com: key "plugins.web.config.url"`, "expected an http or https URL"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.path
			switch {
			case tc.profile != "":
				p = file(strings.ReplaceAll(tc.name, " ", "-")+".yaml", tc.profile)
			case p == "":
				p = good
			}
			r := run(t, tc.env, append(append([]string{"-p", p}, tc.args...), "profile", "check")...)
			r.expect(t, ExitUsage, "", "")
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("message lacks %q:\n%s", w, r.stderr)
				}
			}
			if r.stdout != "" {
				t.Errorf("stdout = %q, want nothing", r.stdout)
			}
			// Every other command that needs the profile refuses it the same way (its usage
			// hint names it).
			r2 := run(t, tc.env, append(append([]string{"-p", p}, tc.args...), "tools", "list")...)
			if r2.code != ExitUsage || strings.Replace(r2.stderr, "'harness tools list --help'", "'harness profile check --help'", 1) != r.stderr {
				t.Errorf("tools list: exit %d, stderr %q; want %d, %q", r2.code, r2.stderr, ExitUsage, r.stderr)
			}
		})
	}
}

func TestProfileCheckIgnoresDisabledRows(t *testing.T) {
	t.Parallel()
	p := writeFile(t, t.TempDir(), "p.yaml", "plugins:\n  s:\n    use: teststrict\n    enabled: false\n    config: {count: many}\n")
	run(t, nil, "-p", p, "profile", "check").expect(t, ExitOK, "ok (0 plugin rows)", "")
}

func TestMCPImport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	doc := writeFile(t, dir, "claude.json", `{
  "mcpServers": {
    "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "env": {"API_TOKEN": "s3cr3t"}},
    "web": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer abc"}},
    "off": {"command": "x", "disabled": true}
  },
  "otherSetting": true
}`)
	r := run(t, nil, "mcp", "import", doc)
	r.expect(t, ExitOK, "extends: cli", "")
	for _, want := range []string{"fs:", "web:", "use: mcpclient", "server-filesystem", "enabled: false"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("import lacks %q:\n%s", want, r.stdout)
		}
	}
	// Round trip: the output is a profile that checks, shows and imports
	// the same way from stdin.
	prof := writeFile(t, dir, "imported.yaml", r.stdout)
	run(t, nil, "-p", prof, "profile", "check").expect(t, ExitOK, "ok (11 plugin rows)", "")
	show := run(t, nil, "-p", prof, "profile", "show")
	show.expect(t, ExitOK, "serverName: fs", "")
	if strings.Contains(show.stdout, "s3cr3t") || strings.Contains(show.stdout, "Bearer abc") {
		t.Errorf("profile show leaks a secret:\n%s", show.stdout)
	}
	data, _ := os.ReadFile(doc)
	fromStdin := runWith(t, context.Background(), testOptions(), string(data), nil, "mcp", "import", "-")
	fromStdin.expect(t, ExitOK, "", "")
	if strings.ReplaceAll(fromStdin.stdout, "<stdin>", doc) != r.stdout {
		t.Errorf("import from stdin differs:\n%s\nvs\n%s", fromStdin.stdout, r.stdout)
	}

	bad := writeFile(t, dir, "bad.json", `{"mcpServers": {"gh": {"command": "x", "args": 5}}}`)
	run(t, nil, "mcp", "import", bad).expect(t, ExitUsage, "", `key "mcpServers.gh.args"`)
	run(t, nil, "mcp", "import", filepath.Join(dir, "none.json")).expect(t, ExitUsage, "", "none.json")
	notJSON := writeFile(t, dir, "x.json", `{"mcpServers": `)
	run(t, nil, "mcp", "import", notJSON).expect(t, ExitUsage, "", "x.json")
}

func TestLogFormats(t *testing.T) {
	t.Parallel()
	p := writeFile(t, t.TempDir(), "p.yaml", "plugins:\n  tools:\n    use: toolregistry\n  bad:\n    use: testfail\n")
	r := run(t, nil, "-p", p, "--log-format", "json", "tools", "list")
	r.expect(t, ExitOK, "", `"level":"WARN"`)
	line, _, _ := strings.Cut(r.stderr, "\n")
	var rec map[string]any
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		t.Fatalf("not a JSON log line: %q", line)
	}
	if !strings.Contains(r.stderr, "this plugin always fails") {
		t.Errorf("failed plugin not logged: %s", r.stderr)
	}
	// Text logs through tint: no colour when stderr is not a terminal.
	r = run(t, nil, "-p", p, "tools", "list")
	r.expect(t, ExitOK, "", "WRN plugin failed to load")
	if strings.Contains(r.stderr, "\x1b[") {
		t.Errorf("colour codes in non-terminal logs: %q", r.stderr)
	}
	// Debug shows fx's own events.
	r = run(t, nil, "-p", p, "--log-level", "debug", "tools", "list")
	r.expect(t, ExitOK, "", "component=fx")
}

func TestTools(t *testing.T) {
	t.Parallel()
	p := writeFile(t, t.TempDir(), "p.yaml", "extends: cli\nplugins:\n  mine:\n    use: testtools\n")
	r := run(t, nil, "-p", p, "tools", "list")
	r.expect(t, ExitOK, "greet", "")
	if !strings.Contains(r.stdout, "NAME") || !strings.Contains(r.stdout, "Greets someone.") || strings.Contains(r.stdout, "Second line") {
		t.Errorf("tools list:\n%s", r.stdout)
	}
	r = run(t, nil, "-p", p, "tools", "list", "--json")
	r.expect(t, ExitOK, `"name": "greet"`, "")
	var infos []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &infos); err != nil || len(infos) < 3 {
		t.Fatalf("tools list --json: %v\n%s", err, r.stdout)
	}

	run(t, nil, "-p", p, "tools", "call", "greet", `{"who": "world"}`).expect(t, ExitOK, "hello, world\n", "")
	stdin := runWith(t, context.Background(), testOptions(), `{"who": "stdin"}`, nil, "-p", p, "tools", "call", "greet", "-")
	stdin.expect(t, ExitOK, "hello, stdin", "")
	r = run(t, nil, "-p", p, "tools", "call", "greet", `{"who": "json"}`, "--json")
	r.expect(t, ExitOK, `"text": "hello, json"`, "")
	// Tool errors of every kind exit 1.
	run(t, nil, "-p", p, "tools", "call", "broken").expect(t, ExitFailure, "broken on purpose", "broken on purpose")
	run(t, nil, "-p", p, "tools", "call", "broken", "--json").expect(t, ExitFailure, `"isError": true`, "broken on purpose")
	run(t, nil, "-p", p, "tools", "call", "greet").expect(t, ExitFailure, "", "who")
	unknown := run(t, nil, "-p", p, "tools", "call", "nosuch")
	unknown.expect(t, ExitFailure, "", `unknown tool "nosuch"`)
	if unknown.stdout != "" {
		t.Errorf("the refusal is on stdout too, as if it were the tool's output: %q", unknown.stdout)
	}

	// A profile without a registry.
	empty := writeFile(t, t.TempDir(), "e.yaml", "plugins: {}\n")
	run(t, nil, "-p", empty, "tools", "list").expect(t, ExitFailure, "", "mounts no tool registry")
}

func TestToolCallInterrupted(t *testing.T) {
	p := writeFile(t, t.TempDir(), "p.yaml", "extends: cli\nplugins:\n  mine:\n    use: testtools\n")
	cx, cancel := context.WithCancel(context.Background())
	defer cancel()
	interrupted := make(chan time.Time, 1)
	go func() {
		select { // the interrupt, once the call runs (not during the start-up, however slow)
		case <-waitStarted:
		case <-cx.Done():
		}
		interrupted <- time.Now()
		cancel()
	}()
	r := runWith(t, cx, testOptions(), "", nil, "-p", p, "tools", "call", "wait")
	r.expect(t, ExitFailure, "", "cancel")
	if d := time.Since(<-interrupted); d > 5*time.Second {
		t.Errorf("interrupted call took %v", d)
	}
}

func TestRunUntilInterrupted(t *testing.T) {
	p := writeFile(t, t.TempDir(), "p.yaml", "extends: cli\nplugins:\n  mine:\n    use: testtools\n")
	cx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done, stderr := startInProcess(t, cx, testEnv(t), "", "running; interrupt to stop", "-p", p, "run")
	cancel() // the interrupt, once it runs
	if code := <-done; code != ExitOK || !strings.Contains(stderr.String(), "shutting down") {
		t.Errorf("run exited %d; logs:\n%s", code, stderr.String())
	}
}

// TestInterruptedDuringStart: run and serve interrupted while a server is still starting
// (the demo server told to wait a minute before serving) exit with status 1 and say they
// were interrupted, not what fx made of it ("starting: context canceled").
func TestInterruptedDuringStart(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := writeFile(t, t.TempDir(), "p.yaml", fmt.Sprintf(`extends: cli
plugins:
  slow:
    use: mcpclient
    config: {serverName: slow, transport: stdio, command: %q, args: [demo-server, --start-delay, 60s]}
`, self))
	for _, command := range [][]string{{"run"}, {"serve", "--addr", "127.0.0.1:0"}} {
		t.Run(command[0], func(t *testing.T) {
			cx, cancel := context.WithCancel(context.Background())
			defer cancel()
			args := append([]string{"-p", p}, command...)
			done, stderr := startInProcess(t, cx, testEnv(t), "", "slow: connecting", args...)
			cancel() // the interrupt, while the host waits for slow
			code := <-done
			out := stderr.String()
			if code != ExitFailure || !strings.Contains(out, "harness: interrupted during start-up") || strings.Contains(out, "context canceled") {
				t.Errorf("%v exited %d, want %d and only that it was interrupted during start-up:\n%s", args, code, ExitFailure, out)
			}
		})
	}
}

func TestRunWithRemoteAPI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := writeFile(t, dir, "p.yaml", "extends: cli\n") // cli has the remote API
	token := filepath.Join(dir, "remote.token")
	cx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done, stderr := startInProcess(t, cx, testEnv(t), "", "running; interrupt to stop", "-p", p, "--set", "plugins.remote.config.tokenFile="+token, "run")
	cancel()
	if code := <-done; code != ExitOK {
		t.Errorf("run exited %d:\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "url=http://127.0.0.1:") {
		t.Errorf("no URL in the logs:\n%s", stderr.String())
	}
}

func TestPrompt(t *testing.T) {
	t.Parallel()
	p := writeFile(t, t.TempDir(), "p.yaml", `extends: cli
plugins:
  prompt:
    config:
      preamble: "You are {{who}}."
      interpolate: true
`)
	run(t, nil, "-p", p, "prompt", "--var", "who=a test").expect(t, ExitOK, "You are a test.\n", "")
	r := run(t, nil, "-p", p, "prompt", "--var", "who=json", "--json")
	r.expect(t, ExitOK, `"text": "You are json."`, "")
	var out struct {
		Sections []host.PromptSection
	}
	// The profile's preamble, then the agent's; the workspace the agent brings adds its own.
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Sections) < 2 || out.Sections[0].Owner == "" || out.Sections[1].Name != "agent:preamble" {
		t.Errorf("prompt --json: %v\n%s", err, r.stdout)
	}
	run(t, nil, "-p", p, "prompt").expect(t, ExitFailure, "", "who")
	run(t, nil, "-p", p, "prompt", "--var", "novalue").expect(t, ExitUsage, "", "expected NAME=VALUE")
	empty := writeFile(t, t.TempDir(), "e.yaml", "plugins: {}\n")
	run(t, nil, "-p", empty, "prompt").expect(t, ExitFailure, "", "mounts no system prompt")
}

func TestNestedRowsMountInAgentScopes(t *testing.T) {
	t.Parallel()
	p := writeFile(t, t.TempDir(), "p.yaml", `extends: cli
plugins:
  agent:
    plugins:
      inner:
        plugins:
          bad:
            use: testfail
      off:
        use: testfail
        enabled: false
`)
	r := run(t, nil, "-p", p, "tools", "list")
	r.expect(t, ExitOK, "", "plugins.agent.plugins.inner.plugins.bad: this plugin always fails")
	if strings.Count(r.stderr, "WRN plugin failed to load") != 1 {
		t.Errorf("the disabled row was mounted:\n%s", r.stderr)
	}
}

// TestRunShowsManagerStatus: with the manager in the profile, run shows where the manager's
// servers stand (from the manager's views), and the profile's own client rows (demo) too.
func TestRunShowsManagerStatus(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	settings := writeFile(t, dir, "servers.yaml", "servers:\n  broken:\n    transport: stdio\n    command: "+
		filepath.Join(dir, "no-such-server")+"\n    reconnect: {maxAttempts: 1, initialDelayMs: 10}\n")
	p := writeFile(t, dir, "p.yaml", "extends: default\nplugins:\n  manager:\n    use: mcpmanager\n    config:\n      settingsFile: "+settings+
		"\n      credentialsFile: "+filepath.Join(dir, "credentials.yaml")+"\n")
	cx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// Interrupt run once both lines are shown.
	stderr := &watchWriter{want: []string{"broken: failed", "demo: connected"}, seen: cancel}
	code := testOptions().Run(cx, []string{"-p", p, "run"}, strings.NewReader(""), io.Discard, stderr, testEnv(t))
	if out := stderr.String(); code != ExitOK || !strings.Contains(out, "broken: failed") || !strings.Contains(out, "demo: connected") {
		t.Fatalf("exit %d, stderr:\n%s", code, out)
	}
	// Each event once: the status line, not also the client's own log record of it.
	if out := stderr.String(); strings.Contains(out, "mcp server failed") || strings.Contains(out, "mcp server connected") {
		t.Errorf("a status shown twice (a log line and a status line):\n%s", out)
	}
}

// watchWriter collects output and calls seen once it contains every string of want.
type watchWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want []string
	seen func()
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if w.seen != nil && !slices.ContainsFunc(w.want, func(s string) bool { return !strings.Contains(w.buf.String(), s) }) {
		w.seen()
		w.seen = nil
	}
	return len(p), nil
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
