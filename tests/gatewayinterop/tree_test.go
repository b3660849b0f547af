//go:build unix

package gatewayinterop

import (
	"bufio"
	"context"
	"io"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/internal/demoserver"
	"github.com/cordisgo/harness/plugins/mcpclient"
)

// mountDemo serves the demo server (Streamable HTTP, in process) until the test ends and
// mounts a client of it, named demo, on root.
func mountDemo(t *testing.T, root *ctx.Context) {
	t.Helper()
	dh, closeSessions := demoserver.HandlerWithClose(demoserver.Options{})
	demo := httptest.NewServer(dh)
	t.Cleanup(func() { closeSessions(); demo.Close() })
	var cfg mcpclient.Config
	cfg.Default()
	cfg.ServerName, cfg.Transport, cfg.URL, cfg.FailOnStartupError = "demo", mcpclient.TransportStreamableHTTP, demo.URL+"/mcp", true
	ctxtest.MountActive(t, root, mcpclient.Plugin, cfg)
}

// runNode runs script (a file of this directory) with args under node until cx ends, calls
// line with each line the script prints, and returns what it printed on stderr and how it
// ended (exec.Cmd.Wait's error).
func runNode(cx context.Context, t *testing.T, script string, args []string, line func(string)) (stderr string, _ error) {
	t.Helper()
	cmd := exec.CommandContext(cx, suite.Node(t), append([]string{script}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errOut strings.Builder
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line(sc.Text())
	}
	_, _ = io.Copy(io.Discard, out)
	err = cmd.Wait()
	return errOut.String(), err
}
