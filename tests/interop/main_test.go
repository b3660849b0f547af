//go:build unix

package interop

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/internal/npmci"
)

// packageName is the reference server the tests run, pinned in package.json here.
const packageName = "@modelcontextprotocol/server-everything"

// suite is this directory's npm packages (the tests' working directory).
var suite = npmci.Suite{Name: "interop", Dir: ".", Prefix: "tests/interop"}

func TestMain(m *testing.M) {
	if os.Getenv(relaySocketEnv) != "" {
		// The test binary re-executed by the plugin as a stdio relay (see runRelay).
		os.Exit(runRelay())
	}
	goleak.VerifyTestMain(m)
}

// server is the installed reference server: how to run it.
type server struct {
	node    string // absolute path of the node executable
	entry   string // absolute path of the package's bin script
	version string // installed version, equal to the pinned one
}

// locate finds node and the installed package (installing it when missing). Anything
// missing skips the test with a hint, or fails it when $CI is set, so that CI cannot pass
// by skipping.
func locate(t *testing.T) server {
	t.Helper()
	entry, version := suite.Bin(t, packageName, "mcp-server-everything")
	return server{node: suite.Node(t), entry: entry, version: version}
}
