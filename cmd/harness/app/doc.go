// Package app is the harness program: the command line, the fx application
// shell around package host (which starts the profile, checks its rows, serves
// the host's remote methods and follows its MCP clients), logging, printing and
// the terminal. The harness binary (cmd/harness) is a one-line main over
// [Main]; a binary with extra plugins is another one (see below). A program
// that runs a host without the command line calls package host directly.
//
// # Commands
//
//	harness [-p|--profile NAME|PATH] [--set k=v]... [--stdio NAME=CMDLINE]... [--http NAME=URL]... <command>
//	  run                        host the profile until SIGINT or SIGTERM, then shut down cleanly;
//	                             every server's status is shown as it changes
//	  tools list [--json]        tools visible at the root: name, server, description
//	  tools call NAME [JSON] [--json]   call through the registry; exit status 1 on a tool error
//	  resources list|templates SERVER / resources read SERVER URI
//	  resources watch SERVER URI... [--read] [--json]   a line per update until Ctrl-C
//	  prompt [--json]            the assembled system prompt (--json: sections with owners)
//	  mcp list | mcp probe NAME | mcp restart NAME   against a running host (remote API) or in process
//	  mcp import FILE            convert an {"mcpServers": ...} document into profile YAML on stdout
//	  profile show | check       the merged profile with secrets redacted / validation only
//	  demo-server [--http ADDR]  the embedded demo MCP server (stdio by default)
//	  version
//
// --profile names a built-in profile or a profile file (default "default");
// --set overlays one key of it and HARNESS_A__B=VALUE variables overlay it
// further (package profiles documents both). --stdio and --http add an MCP
// server on top of the profile without writing a file: NAME becomes the
// server's name and the id of an mcpclient row appended at the top level,
// CMDLINE is split into words like a shell would but with no shell (quotes
// and backslashes work; variables, pipes and globs do not).
//
// Every command that needs the tree loads the profile, decodes every row's
// configuration with its plugin (so mistakes are reported with the file and
// key path before anything starts), mounts the rows in order and waits,
// bounded by --startup-timeout, for the tree to settle: the MCP client's
// activation includes the first connection and tool discovery. Shutdown
// disposes the tree, bounded by --shutdown-timeout.
//
// Servers that did not connect by then are reported once on stderr, and
// the command goes on with the others' tools. docs/cli.md documents every
// command, flag and exit status.
//
// Logs go to stderr: readable lines (coloured on a terminal unless NO_COLOR
// is set) or JSON with --log-format json; --log-level picks the level
// (default warn, info for run). Command output goes to stdout.
//
// # Exit status
//
//   - 0 ([ExitOK]): success.
//   - 1 ([ExitFailure]): a failure at run time: a tool error, a server that
//     cannot be reached, an interruption, an incomplete shutdown.
//   - 2 ([ExitUsage]): the command line, the profile or a plugin
//     configuration is wrong; nothing was run.
//
// # Building a harness with more plugins
//
// The plugin catalog maps the names profile rows use to plugin definitions
// ([host.Catalog] returns the built-in one). A third-party plugin is compiled in
// by a main package that passes it in [Options.Plugins]:
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
// A profile row `use: mytools` then mounts it. The binary has every
// built-in command and profile; [Options] also renames the program and sets
// its version.
//
// # Application shell
//
// fx (go.uber.org/fx) wires the process-wide values once per command: the
// logger, the profile and the root scope, with mounting the profile as the
// start hook and disposing the root as the stop hook. Its own event log
// goes to the logger at debug level. fx stops at the root scope: plugins
// never see it, and everything dynamic (servers coming and going, agent
// scopes) is the scope tree's job.
package app
