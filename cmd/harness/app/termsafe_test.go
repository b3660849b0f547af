package app

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cordisgo/harness/internal/demoserver"
)

// rawControl reports whether s holds a control character a terminal would act on.
func rawControl(s string) bool {
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			return true
		}
	}
	return false
}

// TestTerminalSafety runs the binary's commands against a misbehaving server (the demo
// server with --hostile: escape sequences in its version, instructions, stderr, the tool's
// title and description, its log message, progress and result). Human output shows them
// as visible escapes on stdout and stderr alike; --json passes the text unchanged.
func TestTerminalSafety(t *testing.T) {
	t.Parallel()
	p := writeFile(t, t.TempDir(), "hostile.yaml", `extends: cli
plugins:
  h:
    use: mcpclient
    config:
      serverName: h
      transport: stdio
      command: ${HARNESS_SELF}
      args: [demo-server, --hostile]
`)
	const visible = `\x1b]0;owned\x07\x1b[2J\x1b[31mred\x1b[0m\u009b31m`
	for _, tc := range []struct {
		args []string
		want string // on stdout, visibly
	}{
		{[]string{"tools", "list"}, "Answers with terminal escape sequences " + visible},
		{[]string{"tools", "call", "mcp__h__hostile", "{}"}, "result " + visible},
		{[]string{"--log-level", "debug", "tools", "call", "mcp__h__hostile", "{}"}, "result " + visible},
		{[]string{"prompt"}, visible},
		{[]string{"mcp", "probe", "h"}, visible},
		{[]string{"mcp", "list"}, ""},
	} {
		r := run(t, nil, append([]string{"-p", p}, tc.args...)...)
		if r.code != ExitOK {
			t.Errorf("%v: exit %d\n%s", tc.args, r.code, r.stderr)
		}
		if rawControl(r.stdout) || rawControl(r.stderr) {
			t.Errorf("%v: a control character reached the terminal:\nstdout %q\nstderr %q", tc.args, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stdout, tc.want) {
			t.Errorf("%v: stdout lacks %q:\n%s", tc.args, tc.want, r.stdout)
		}
	}
	r := run(t, nil, "-p", p, "tools", "call", "--json", "mcp__h__hostile", "{}")
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || len(res.Content) == 0 || res.Content[0].Text != "result "+demoserver.HostileText {
		t.Errorf("--json: the text is not the server's: %v %q", err, r.stdout)
	}
}
