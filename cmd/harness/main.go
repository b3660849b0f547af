// Command harness hosts agent-harness plugins in a tree of scopes and
// connects them to MCP servers, as a profile composes them:
//
//	harness tools list                       # the default profile: the embedded demo server
//	harness -p web run                       # host a profile until interrupted
//	harness --stdio 'fs=npx -y @modelcontextprotocol/server-filesystem .' tools list
//	harness profile show                     # the merged profile, secrets redacted
//
// Run `harness --help` for every command and flag. The program is
// [github.com/cordisgo/harness/cmd/harness/app]; this file only calls it.
//
// # A harness with more plugins
//
// Plugins join a binary by being compiled in. To add your own, write a
// main package of five lines and build it with go build:
//
//	package main
//
//	import (
//		"os"
//
//		"github.com/cordisgo/harness/cmd/harness/app"
//		"github.com/cordisgo/harness/ctx"
//		"example.com/mytools"
//	)
//
//	func main() {
//		os.Exit(app.Main(app.Options{Plugins: map[string]ctx.PluginDef{"mytools": mytools.Plugin}}))
//	}
//
// Profiles then mount it like any built-in plugin (use: mytools).
package main

import (
	"os"

	"github.com/cordisgo/harness/cmd/harness/app"
)

func main() { os.Exit(app.Main(app.Options{})) }
