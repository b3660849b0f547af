package app

import (
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
		if got := statusLine(tc.st); got != tc.want {
			t.Errorf("statusLine(%+v) = %q, want %q", tc.st, got, tc.want)
		}
	}
}
