// Package app is the harness program: the command line (cobra), the fx application shell
// around package host, logging (tint) and the wiring of the libraries the commands are
// built on — hostclient (a running host, or this process's tree, called through one
// remote.Caller), hostview (what a host answers, for people), termui (live lines,
// progress, spinner), termform (servers' questions), turn and termchat (the agent),
// hostgateway (the gateway), host/adhoc (--stdio and --http servers). The harness binary
// (cmd/harness) is a one-line main over [Main]; docs/cli.md documents every command, flag
// and exit status (0 success, 1 a failure at run time, 2 the command line or the profile
// is wrong and nothing ran, 3 an agent's turn stopped before the model finished).
//
// # Building a harness with more plugins
//
// The plugin catalog maps the names profile rows use to plugin definitions
// ([host.Catalog] returns the built-in one). A third-party plugin is compiled in by a main
// package that passes it in [Options.Plugins]:
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
// A profile row `use: mytools` then mounts it. fx wires the process-wide values once per
// command (the logger, the profile, the root scope; mounting as the start hook, disposal as
// the stop hook); everything dynamic is the scope tree's job, and plugins never see fx.
package app
