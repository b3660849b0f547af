package host

import (
	"strings"
	"testing"

	"github.com/cordisgo/harness/plugins/mcpclient"
)

// TestStatusLine: a failure shows its cause and the end of the server's stderr; a clean
// stop or a connection does not show the server's banner as if it were an error.
func TestStatusLine(t *testing.T) {
	banner := "Secure MCP Filesystem Server running on stdio"
	for _, tc := range []struct {
		st   mcpclient.Status
		want string
	}{
		{mcpclient.Status{Server: "fs", Phase: mcpclient.PhaseDisposed, StderrTail: banner}, "fs: disposed"},
		{mcpclient.Status{Server: "fs", Phase: "removed", StderrTail: banner}, "fs: removed"},
		{mcpclient.Status{Server: "fs", Phase: mcpclient.PhaseConnected, Tools: []string{"a"}, StderrTail: banner}, "fs: connected (1 tool)"},
		{mcpclient.Status{Server: "fs", Phase: mcpclient.PhaseFailed, Err: `mcp server "fs": connect: EOF`, StderrTail: "boom\nError: no access"},
			"fs: failed: connect: EOF (stderr: Error: no access)"},
	} {
		if got := StatusLine(tc.st); got != tc.want {
			t.Errorf("StatusLine(%+v) = %q, want %q", tc.st, got, tc.want)
		}
	}
}

// run's live status shows a server waiting for a login with the hint.
func TestStatusLineNeedsAuth(t *testing.T) {
	t.Parallel()
	line := StatusLine(mcpclient.Status{Server: "hosted", Phase: mcpclient.PhaseNeedsAuth,
		Err: `mcp server "hosted" needs authorization (not logged in): run ` + "`harness mcp login hosted`"})
	if !strings.HasPrefix(line, "hosted: needs-auth: ") || !strings.Contains(line, "harness mcp login hosted") {
		t.Fatalf("status line %q", line)
	}
}
