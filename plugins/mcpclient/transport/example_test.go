package transport_test

import (
	"fmt"

	"github.com/cordisgo/harness/plugins/mcpclient/transport"
)

// ExampleKillProcessGroups: a host that must exit at once (a second interrupt) kills the
// process groups of the stdio servers that may still run, so that none outlives it.
func ExampleKillProcessGroups() {
	n := transport.KillProcessGroups()
	fmt.Println(n, "server process groups killed")
	// Output: 0 server process groups killed
}
