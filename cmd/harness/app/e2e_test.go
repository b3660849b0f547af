package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/internal/demoserver"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/testkit/mcptest"
)

// These tests run commands on the default profile with the real MCP client:
// its demo row re-executes the test binary (${HARNESS_SELF}) as
// `demo-server`, which TestMain turns into the harness (SelfEnv).

// selfCmd returns the command line that runs the test binary as the
// harness's demo server, for --stdio, with extra demo-server flags. Its
// command is Self, so the row gets SelfEnv (see testOptions).
func selfCmd(t *testing.T, flags ...string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(append([]string{"'" + self + "'", "demo-server"}, flags...), " ")
}

func TestDefaultToolsList(t *testing.T) {
	t.Parallel()
	r := run(t, nil, "tools", "list")
	r.expect(t, ExitOK, "mcp__demo__echo", "")
	// The built-in profile's agent brings the workspace's tools (its server not started).
	for _, want := range []string{"mcp__demo__add", "mcp__demo__slow", "mcp__demo__fail", "mcp__demo__image", "read_mcp_resource", "list_mcp_resources",
		"mcp__workspace__read_file", "mcp__workspace__shell"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("tools list lacks %s:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "mcp__demo__echo               demo       Returns the given text unchanged.") {
		t.Errorf("tools list does not show echo's server and description:\n%s", r.stdout)
	}
	if r.stderr != "" {
		t.Errorf("stderr: %s", r.stderr)
	}

	r = run(t, nil, "tools", "list", "--json")
	r.expect(t, ExitOK, `"name": "mcp__demo__echo"`, "")
	var infos []toolregistry.Info
	if err := json.Unmarshal([]byte(r.stdout), &infos); err != nil {
		t.Fatalf("tools list --json: %v\n%s", err, r.stdout)
	}
	found := false
	for _, in := range infos {
		if in.Name == "mcp__demo__add" {
			found = true
			if in.Meta["server"] != "demo" || !strings.Contains(string(in.Parameters), `"a"`) {
				t.Errorf("add: %+v", in)
			}
		}
	}
	if !found {
		t.Errorf("no mcp__demo__add in %s", r.stdout)
	}
}

// TestToolsCallLastProgress: off a terminal, a call's progress is printed line by line to
// its last notification, which the server sends just before its answer (issue 35, item 9).
func TestToolsCallLastProgress(t *testing.T) {
	t.Parallel()
	r := run(t, nil, "tools", "call", "mcp__demo__slow", `{"ms":300}`, "--local")
	r.expect(t, ExitOK, "", "progress: demo/slow 300/300 (100%) waited 300 of 300 ms")
}

func TestDefaultToolsCall(t *testing.T) {
	t.Parallel()
	run(t, nil, "tools", "call", "mcp__demo__add", `{"a":2,"b":40}`).expect(t, ExitOK, "42\n", "")
	// A tool error: exit status 1, the message on stdout (as the model sees
	// it) and on stderr.
	run(t, nil, "tools", "call", "mcp__demo__fail").expect(t, ExitFailure, "always fails", "always fails")
	// Arguments the schema refuses never reach the server.
	r := run(t, nil, "tools", "call", "mcp__demo__add", `{"a":"two"}`)
	r.expect(t, ExitFailure, "", `tool "mcp__demo__add": invalid arguments`)
}

// demoHTTP serves the demo server in process and returns the global flags
// that mount it as server "demo" on the cli profile: the same server as the
// default profile's, without a process to start (these tests are about the
// commands, not the transport).
func demoHTTP(t *testing.T) []string {
	t.Helper()
	return []string{"-p", "cli", "--http", "demo=" + demoURL(t)}
}

// demoURL serves the demo server over Streamable HTTP until the test ends
// (mcptest.NewHTTP) and returns its URL.
func demoURL(t *testing.T) string {
	t.Helper()
	return mcptest.NewHTTP(t, func() *mcp.Server { return demoserver.New(demoserver.Options{}) }).URL() + "/mcp"
}

func TestToolsCallOutputs(t *testing.T) {
	t.Parallel()
	demo := demoHTTP(t)
	call := func(args ...string) result {
		return run(t, nil, append(append([]string{}, demo...), append([]string{"tools", "call"}, args...)...)...)
	}
	call("mcp__demo__echo", `{"text":"hi there"}`).expect(t, ExitOK, "hi there\n", "")
	r := call("mcp__demo__add", `{"a":2,"b":40}`, "--json")
	r.expect(t, ExitOK, `"structuredContent"`, "")
	if !strings.Contains(r.stdout, `"sum": 42`) {
		t.Errorf("add --json:\n%s", r.stdout)
	}
	call("mcp__demo__fail", `{"message":"boom"}`, "--json").expect(t, ExitFailure, `"isError": true`, "boom")
	call("mcp__demo__add", `{"a":"two"}`, "--json").expect(t, ExitFailure, `"code": "invalid_arguments"`, "invalid arguments")
	call("mcp__demo__nosuch").expect(t, ExitFailure, "", `unknown tool "mcp__demo__nosuch"`)
}

func TestDefaultPrompt(t *testing.T) {
	t.Parallel()
	run(t, nil, "prompt").expect(t, ExitOK, "### MCP server: demo\n\nThe harness demo server", "")
	r := run(t, nil, "prompt", "--json")
	r.expect(t, ExitOK, "", "")
	var out struct {
		Text     string
		Sections []host.PromptSection
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("prompt --json: %v\n%s", err, r.stdout)
	}
	var demo *host.PromptSection
	for i, s := range out.Sections {
		if s.Name == "mcp:demo" {
			demo = &out.Sections[i]
		}
	}
	if demo == nil || demo.Owner == "" || !strings.Contains(demo.Text, "demo server") || !strings.Contains(out.Text, demo.Text) {
		t.Errorf("no mcp:demo section with an owner:\n%s", r.stdout)
	}
}

func TestDefaultResources(t *testing.T) {
	t.Parallel()
	// A table for people; the canonical result, without empty fields, with --json.
	r := run(t, nil, "resources", "list", "demo")
	r.expect(t, ExitOK, "URI ", "")
	for _, want := range []string{"NAME", "MIME TYPE", "SIZE", "demo://readme", "text/markdown", "886 B", "demo://logo.png", "image/png"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("resources list lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, `"uri"`) {
		t.Errorf("resources list prints JSON, not a table:\n%s", r.stdout)
	}
	r = run(t, nil, "resources", "list", "demo", "--json")
	r.expect(t, ExitOK, `"uri": "demo://readme"`, "")
	if strings.Contains(r.stdout, `"ttlMs"`) || strings.Contains(r.stdout, `""`) || strings.Contains(r.stdout, "null") {
		t.Errorf("empty protocol fields in --json:\n%s", r.stdout)
	}
	run(t, nil, "resources", "templates", "demo").expect(t, ExitOK, "demo://notes/{id}  note  text/plain", "")
	// Without SERVER: every server's, with a SERVER column; --cursor needs a server.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	two := []string{"--stdio", "second='" + self + "' demo-server", "--env", testMainEnv + "=1"}
	r = run(t, nil, append(two, "resources", "list")...)
	r.expect(t, ExitOK, "SERVER  URI ", "")
	for _, want := range []string{"demo    demo://readme ", "second  demo://readme "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("resources list of every server lacks %q:\n%s", want, r.stdout)
		}
	}
	r = run(t, nil, append(two, "resources", "templates", "--json")...)
	r.expect(t, ExitOK, `"server": "second"`, "")
	r.expect(t, ExitOK, `"uriTemplate": "demo://notes/{id}"`, "")
	run(t, nil, "resources", "list", "--cursor", "x").expect(t, ExitUsage, "", "resources list: --cursor continues one server's listing: name the SERVER")
	// read writes the text itself: `> file` gives the file.
	r = run(t, nil, "resources", "read", "demo", "demo://readme")
	r.expect(t, ExitOK, "embedded demo MCP server", "")
	if !strings.HasPrefix(r.stdout, "# harness-demo\n") {
		t.Errorf("resources read does not print the text as it is:\n%q", r.stdout)
	}
	// A blob is described, not dumped, unless written with --output.
	r = run(t, nil, "resources", "read", "demo", "demo://logo.png")
	r.expect(t, ExitOK, "", "demo://logo.png: image/png binary contents (92 B) not written to the terminal; save them with --output FILE")
	if r.stdout != "" {
		t.Errorf("blob read wrote to stdout:\n%q", r.stdout)
	}
	// A read that fails leaves stdout empty (a `> file` never holds an error message), unlike
	// tools call, whose stdout is what the model is shown; --json prints the failed result.
	r = run(t, nil, "resources", "read", "demo", "demo://nosuch")
	r.expect(t, ExitFailure, "", "Resource not found")
	if r.stdout != "" {
		t.Errorf("a failed read wrote to stdout:\n%q", r.stdout)
	}
	run(t, nil, "resources", "read", "demo", "demo://nosuch", "--json").expect(t, ExitFailure, `"isError": true`, "Resource not found")
	out := filepath.Join(t.TempDir(), "logo.png")
	run(t, nil, "resources", "read", "demo", "demo://logo.png", "--output", out).expect(t, ExitOK, "", "wrote 92 B to "+out)
	if b, err := os.ReadFile(out); err != nil || !strings.HasPrefix(string(b), "\x89PNG") {
		t.Errorf("--output: %v %q", err, b)
	}
}

func TestResourcesOutputsAndErrors(t *testing.T) {
	t.Parallel()
	demo := demoHTTP(t)
	res := func(args ...string) result {
		return run(t, nil, append(append([]string{}, demo...), append([]string{"resources"}, args...)...)...)
	}
	res("read", "demo", "demo://notes/7").expect(t, ExitOK, "This note was generated by harness-demo for the id \"7\".", "")
	res("list", "demo", "--json").expect(t, ExitOK, `"resources"`, "")
	res("list", "nosuch").expect(t, ExitFailure, "", "nosuch")
	res("read", "demo", "demo://missing").expect(t, ExitFailure, "", "Resource not found")
	res("read", "demo").expect(t, ExitUsage, "", "accepts 2 arg(s)")
	run(t, nil, "-p", "cli", "--set", "plugins.agent.enabled=false", "resources", "list", "demo").expect(t, ExitFailure, "", "no list_mcp_resources tool")
}

func TestAdhocStdioServer(t *testing.T) {
	t.Parallel()
	r := run(t, nil, "--stdio", "x="+selfCmd(t), "tools", "list")
	r.expect(t, ExitOK, "mcp__x__echo", "")
	if !strings.Contains(r.stdout, "mcp__demo__echo") {
		t.Errorf("the profile's server is missing:\n%s", r.stdout)
	}
}

func TestAdhocHTTPServer(t *testing.T) {
	t.Parallel()
	server := "web=" + demoURL(t)
	r := run(t, nil, "-p", "cli", "--http", server, "tools", "list")
	r.expect(t, ExitOK, "mcp__web__echo", "")
	run(t, nil, "-p", "cli", "--http", server, "tools", "call", "mcp__web__add", `{"a":20,"b":22}`).expect(t, ExitOK, "42\n", "")
	run(t, nil, "-p", "cli", "--http", server, "resources", "read", "web", "demo://readme").expect(t, ExitOK, "embedded demo MCP server", "")
}

// TestSlowServerIsWaitedFor: a server that takes a while to start is
// connected before the command lists the tools.
func TestSlowServerIsWaitedFor(t *testing.T) {
	t.Parallel()
	r := run(t, nil, "--stdio", "slow="+selfCmd(t, "--start-delay", "1s"), "tools", "list")
	r.expect(t, ExitOK, "mcp__slow__echo", "")
	if !strings.Contains(r.stdout, "mcp__demo__echo") {
		t.Errorf("tools list:\n%s", r.stdout)
	}
}

// TestFailingServerDoesNotHang: a server that cannot start is reported with
// its error, and the command goes on with the other servers' tools.
func TestFailingServerDoesNotHang(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "no-such-server")
	r := run(t, nil, "--stdio", "bad="+missing, "tools", "list")
	r.expect(t, ExitOK, "mcp__demo__echo", "harness: mcp server bad: failed: connect: fork/exec ")
	if strings.Contains(r.stderr, "ERR mcp server failed") {
		t.Errorf("the failure is shown twice, as a log line and a status line:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, "no-such-server") || strings.Contains(r.stdout, "mcp__bad__") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	// With failOnStartupError the client's scope fails: its error is logged
	// and the rest still works.
	p := writeFile(t, t.TempDir(), "p.yaml", `extends: default
plugins:
  bad:
    use: mcpclient
    config:
      serverName: bad
      transport: stdio
      command: `+missing+`
      failOnStartupError: true
`)
	r = run(t, nil, "-p", p, "tools", "call", "mcp__demo__echo", `{"text":"still here"}`)
	r.expect(t, ExitOK, "still here", "plugins.bad: ")
	if !strings.Contains(r.stderr, "no-such-server") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
}
