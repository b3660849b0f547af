package app

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/plugins/remote"
)

// startHost runs `harness -p profile run` in process with env, waits until it runs, and
// stops it when the test ends; it returns the host's stderr.
func startHost(t *testing.T, env []string, profile string) *watchWriter {
	t.Helper()
	return startRun(t, env, "-p", profile, "run")
}

// hostFixture is a profile with the manager (one HTTP server, "managed", and two that fail),
// the default profile's demo row and the remote API whose files are in the default place
// of an environment whose XDG_CONFIG_HOME is a temporary directory.
type hostFixture struct {
	dir, profile, endpoint, settings string
	env                              []string
}

func newHostFixture(t *testing.T) *hostFixture {
	t.Helper()
	dir := t.TempDir()
	url := demoURL(t)
	script := writeScript(t, dir, "fails.sh", "#!/bin/sh\necho 'oops: no database' >&2\nexit 3\n")
	settings := writeFile(t, dir, "mcp-servers.yaml", `# the servers of the test host
servers:
  managed:
    transport: streamable-http
    url: `+url+`
  broken:
    transport: stdio
    command: `+script+`
    reconnect: {maxAttempts: 1, initialDelayMs: 10}
  slowretry:
    transport: stdio
    command: `+script+`
    reconnect: {maxAttempts: 5, initialDelayMs: 60000, maxDelayMs: 60000}
`)
	cfgHome := filepath.Join(dir, "config")
	token := filepath.Join(cfgHome, "harness", "remote.token")
	profile := writeFile(t, dir, "host.yaml", "extends: default\nplugins:\n  manager:\n    use: mcpmanager\n    config:\n      settingsFile: "+settings+
		"\n      credentialsFile: "+filepath.Join(dir, "credentials.yaml")+"\n  remote:\n    use: remote\n    config:\n      tokenFile: "+token+"\n")
	return &hostFixture{dir: dir, profile: profile, settings: settings, endpoint: filepath.Join(cfgHome, "harness", "remote.endpoint.json"),
		env: []string{"XDG_CONFIG_HOME=" + cfgHome, "HOME=" + dir}}
}

// TestOneEndpointPerHost: only run publishes the endpoint; a one-shot command on the same
// profile neither takes it over nor removes it, and a second run on the same files refuses,
// naming the first one's pid.
func TestOneEndpointPerHost(t *testing.T) {
	t.Parallel()
	f := newHostFixture(t)
	startHost(t, f.env, f.profile)
	before, err := os.ReadFile(f.endpoint)
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, f.env, "-p", f.profile, "tools", "list")
	r.expect(t, ExitOK, "mcp__managed__echo", "")
	if strings.Contains(r.stderr, "failed to load") {
		t.Errorf("the one-shot command mounted the remote API:\n%s", r.stderr)
	}
	after, err := os.ReadFile(f.endpoint)
	if err != nil || string(after) != string(before) {
		t.Fatalf("the one-shot command replaced or removed the host's endpoint file: %v\n%s", err, after)
	}
	// The host is still reachable, by the default endpoint file of the environment.
	run(t, f.env, "mcp", "list").expect(t, ExitOK, "managed", "answering for the host at http://127.0.0.1:")

	cx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	second := runWith(t, cx, testOptions(), "", f.env, "-p", f.profile, "run")
	second.expect(t, ExitFailure, "", "belongs to the host running as pid "+strconv.Itoa(os.Getpid()))
	if after, _ := os.ReadFile(f.endpoint); string(after) != string(before) {
		t.Fatalf("the refused host touched the endpoint file")
	}
}

// TestAnsweringForHost: a command that answers for a running host says so, naming its pid
// and profile; -p (or --stdio, --http, --set) means this process unless --host is given.
func TestAnsweringForHost(t *testing.T) {
	t.Parallel()
	f := newHostFixture(t)
	startHost(t, f.env, f.profile)
	note := "answering for the host at http://127.0.0.1:"
	r := run(t, f.env, "mcp", "list")
	r.expect(t, ExitOK, "managed", note)
	r.expect(t, ExitOK, "demo", "(pid "+strconv.Itoa(os.Getpid())+", profile "+f.profile+")")
	r.expect(t, ExitOK, "", "; --local for this profile")

	r = run(t, f.env, "-p", "default", "mcp", "list")
	r.expect(t, ExitOK, "demo", "")
	if strings.Contains(r.stderr, note) || strings.Contains(r.stdout, "managed") {
		t.Errorf("-p default answered for the host:\n%s\n%s", r.stdout, r.stderr)
	}
	run(t, f.env, "-p", "default", "mcp", "list", "--host").expect(t, ExitOK, "managed", note)
	run(t, f.env, "--stdio", "x=/bin/true", "mcp", "list").expect(t, ExitOK, "x ", "")
	// --host without a host is an error, not a silent answer from this process.
	run(t, nil, "mcp", "list", "--endpoint", filepath.Join(f.dir, "none.json")).expect(t, ExitFailure, "", "no running host")
}

// TestRemoteErrorsAndRows: against a running host, an unknown name lists the host's names
// (with a did-you-mean); the profile's own rows (demo) are listed, probed and restarted
// like the manager's servers.
func TestRemoteErrorsAndRows(t *testing.T) {
	t.Parallel()
	f := newHostFixture(t)
	startHost(t, f.env, f.profile)
	r := run(t, f.env, "mcp", "restart", "nosuch")
	r.expect(t, ExitFailure, "", `no MCP server "nosuch" on the host at http://127.0.0.1:`)
	r.expect(t, ExitFailure, "", "known: broken, demo, managed, slowretry")
	if strings.Contains(r.stderr, "no MCP server manager") {
		t.Errorf("an unknown name reported as a missing manager:\n%s", r.stderr)
	}
	run(t, f.env, "mcp", "probe", "manged").expect(t, ExitFailure, "", `(did you mean "managed"?)`)

	r = run(t, f.env, "mcp", "list")
	r.expect(t, ExitOK, "demo       connected", "")
	run(t, f.env, "mcp", "probe", "demo").expect(t, ExitOK, "demo: ok in ", "")
	run(t, f.env, "mcp", "restart", "demo").expect(t, ExitOK, "demo: restarted: connected (8 tools)", "")
	run(t, f.env, "mcp", "restart", "managed").expect(t, ExitOK, "managed: restarted: connected (8 tools)", "")

	// The host's methods decode their parameters strictly, once: a misspelt or missing key
	// is refused as bad_request, naming the method and the key.
	cl, err := remote.Discover(f.endpoint)
	if err != nil {
		t.Fatal(err)
	}
	cx := ctxtest.Wait(t)
	err = cl.Call(cx, host.MethodProbe.Name(), map[string]any{"nmae": "demo"}, nil)
	if re, ok := errors.AsType[*remote.Error](err); !ok || re.Code != remote.CodeBadRequest ||
		!strings.Contains(re.Message, `remote method "harness/mcpProbe": invalid params: key "nmae": unknown key (did you mean "name"?)`) {
		t.Errorf("probe with a misspelt key: %v", err)
	}
	for _, tc := range []struct {
		method string
		params any
		want   string
	}{
		{host.MethodRestart.Name(), map[string]any{"name": "demo", "timeout": 5}, `key "timeout": unknown key: expected one of name, timeoutMs`},
		{host.MethodRestart.Name(), map[string]any{"timeoutMs": -1}, `key "name": required`},
		{host.MethodWatchResources.Name(), map[string]any{"server": "demo", "uri": "demo://readme"}, `key "uri": unknown key`},
	} {
		err := cl.Stream(cx, tc.method, tc.params, func(json.RawMessage) error { return nil })
		if re, ok := errors.AsType[*remote.Error](err); !ok || re.Code != remote.CodeBadRequest || !strings.Contains(re.Message, tc.want) {
			t.Errorf("%s %v: %v, want bad_request %q", tc.method, tc.params, err, tc.want)
		}
	}
}

// TestRestartWaitsForOutcome: mcp restart returns once the server connected, or with the
// failure and its cause, or after --timeout with where the server stands; in process and
// against a running host alike.
func TestRestartWaitsForOutcome(t *testing.T) {
	t.Parallel()
	f := newHostFixture(t)
	local := []string{"-p", f.profile, "--set", "plugins.remote.enabled=false"}
	check := func(t *testing.T, args ...string) {
		t.Helper()
		run(t, f.env, append(args, "mcp", "restart", "managed")...).expect(t, ExitOK, "managed: restarted: connected (8 tools)", "")
		r := run(t, f.env, append(args, "mcp", "restart", "broken")...)
		r.expect(t, ExitFailure, "", "restarted, but mcp server broken: failed: ")
		r.expect(t, ExitFailure, "", "oops: no database")
		r = run(t, f.env, append(args, "mcp", "restart", "slowretry", "--timeout", "1s")...)
		r.expect(t, ExitFailure, "", `mcp server "slowretry" restarted but is still reconnecting after 1s`)
		r.expect(t, ExitFailure, "", "(--timeout to wait longer)")
	}
	t.Run("in-process", func(t *testing.T) { check(t, local...) })
	t.Run("host", func(t *testing.T) {
		startHost(t, f.env, f.profile)
		check(t)
	})
}

// TestToolsSearchOnHost: tools search answers for a running host, as tools list does: the
// host's fleet (its settings file's server "managed", which this process's profile lacks)
// is ranked there, and an unknown --server names the host's servers.
func TestToolsSearchOnHost(t *testing.T) {
	f := newHostFixture(t)
	startHost(t, f.env, f.profile)
	r := run(t, f.env, "tools", "search", "--server", "managed", "add", "two", "numbers")
	r.expect(t, ExitOK, "mcp__managed__add", "answering for the host at http://127.0.0.1:")
	run(t, f.env, "tools", "search", "--server", "manged", "add").expect(t, ExitUsage, "", `(did you mean "managed"?)`)
	run(t, f.env, "tools", "search", "--local", "--server", "managed", "add").expect(t, ExitUsage, "", `no MCP server "managed" in profile "default"; known: demo`)
}
