//go:build faults

package faults

import (
	"net"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/cmd/harness/app"
	"github.com/cordisgo/harness/testkit/mcptest"
)

// harnessEnv=1 makes the re-executed test binary the harness binary; started as a stdio
// test server (mcptest.Stdio) it serves that instead.
const harnessEnv = "HARNESS_FAULTS_HARNESS"

func TestMain(m *testing.M) {
	mcptest.Serve()
	if os.Getenv(harnessEnv) == "1" {
		os.Exit(app.Main(harnessOptions()))
	}
	warmUp()
	goleak.VerifyTestMain(m)
}

// harnessOptions make every server row that runs this binary a harness too (the demo
// server is the harness's demo-server command).
func harnessOptions() app.Options {
	return app.Options{SelfEnv: map[string]string{harnessEnv: "1"}}
}

// warmUp makes the runtime create the descriptors it keeps for the process's life (the
// network poller), so that the first test's descriptor count is not off by them.
func warmUp() {
	if ln, err := net.Listen("tcp", "127.0.0.1:0"); err == nil {
		_ = ln.Close() // opened only for the runtime to set up; nothing was sent
	}
	if r, w, err := os.Pipe(); err == nil {
		_ = r.Close() // as above: opened only to be closed
		_ = w.Close()
	}
}
