package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cordisgo/harness/hostgateway"
)

// startRun runs `harness ARGS` (a hosting command) in process with env until the test
// ends, and returns its stderr once it says it runs.
func startRun(t *testing.T, env []string, args ...string) *watchWriter {
	t.Helper()
	cx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel) // also when it does not start
	done, stderr := startInProcess(t, cx, env, "", "running; interrupt to stop", args...)
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != ExitOK {
			t.Errorf("%v exited %d:\n%s", args, code, stderr.String())
		}
	})
	return stderr
}

// waitFor returns a channel closed when w has shown every one of want from now on.
func (w *watchWriter) waitFor(want ...string) <-chan struct{} {
	ch := make(chan struct{})
	w.mu.Lock()
	defer w.mu.Unlock()
	w.want, w.seen = want, func() { close(ch) }
	return ch
}

// TestOneHost: `run --gateway` on the default profile is the one host: a server added with
// mcp add joins it (the default profile runs the user's settings file), the tools commands
// of other processes answer for it (--local: this process, which has the server too), and a
// second host on the same files, or a serve on its gateway's port, refuses before mounting
// anything, naming the first one's pid.
func TestOneHost(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	host := startRun(t, env, "run", "--gateway", "--addr", "127.0.0.1:0")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	connected := host.waitFor("added: connected")
	run(t, env, "mcp", "add", "added", "--env", testMainEnv+"=1", "--", self, "demo-server").expect(t, ExitOK, "added", "")
	select {
	case <-connected:
	case <-time.After(20 * time.Second):
		t.Fatalf("the host never connected the added server:\n%s", host.String())
	}
	pid := "pid " + strconv.Itoa(os.Getpid())
	r := run(t, env, "tools", "list")
	r.expect(t, ExitOK, "mcp__added__echo", "answering for the host at http://127.0.0.1:")
	r.expect(t, ExitOK, "mcp__demo__echo", pid)
	run(t, env, "tools", "call", "mcp__added__echo", `{"text": "through the host"}`).expect(t, ExitOK, "through the host", pid)
	r = run(t, env, "tools", "call", "mcp__added__echo", "-", "--json")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "arguments must be a JSON object") {
		t.Errorf("a usage error on the host: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	run(t, env, "resources", "list", "added").expect(t, ExitOK, "demo://readme", pid)
	run(t, env, "prompts", "list").expect(t, ExitOK, "added", pid)

	local := run(t, env, "tools", "list", "--local")
	local.expect(t, ExitOK, "mcp__added__echo", "")
	if strings.Contains(local.stderr, "answering for") {
		t.Errorf("--local answered for the host:\n%s", local.stderr)
	}

	second := run(t, env, "run")
	second.expect(t, ExitFailure, "", "belongs to the host running as "+pid)
	if strings.Contains(second.stderr, "connected") {
		t.Errorf("the refused host mounted servers:\n%s", second.stderr)
	}
	var gw hostgateway.Endpoint
	b, err := os.ReadFile(filepath.Join(strings.TrimPrefix(env[1], "XDG_CONFIG_HOME="), "harness", "gateway.json"))
	if err != nil || json.Unmarshal(b, &gw) != nil {
		t.Fatalf("gateway endpoint file: %v %s", err, b)
	}
	addr := strings.TrimSuffix(strings.TrimPrefix(gw.URL, "http://"), "/mcp")
	busy := run(t, env, "serve", "--addr", addr)
	busy.expect(t, ExitFailure, "", "the gateway of the host running as "+pid)
}

// TestProfileCheckWarnsUnsetVariables: profile check warns about every ${VAR} reference to
// a variable that is not set (the server would fail to mount), and about nothing else.
func TestProfileCheckWarnsUnsetVariables(t *testing.T) {
	t.Parallel()
	p := writeFile(t, t.TempDir(), "p.yaml", `extends: cli
plugins:
  gh:
    use: mcpclient
    config:
      serverName: gh
      transport: streamable-http
      url: https://${GH_HOST_IS_SET}/mcp
      headers: {Authorization: "Bearer ${GH_TOKEN_NOT_SET}", X-Default: "${NOT_SET_EITHER:-fine}"}
`)
	r := run(t, append(testEnv(t), "GH_HOST_IS_SET=example.com"), "-p", p, "profile", "check")
	r.expect(t, ExitOK, "ok", `warning: key "plugins.gh.config.headers.Authorization": ${GH_TOKEN_NOT_SET}: environment variable is not set`)
	if strings.Count(r.stderr, "warning") != 1 {
		t.Errorf("want one warning:\n%s", r.stderr)
	}
}
