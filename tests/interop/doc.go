// Package interop holds the interoperability tests of the MCP client plugin against a
// third-party reference server, @modelcontextprotocol/server-everything from npm. It has no
// code of its own; everything is in its tests.
//
// The server is pinned to an exact version in package.json, with package-lock.json
// committed next to it. Install it before running the tests (CI does this in .ci/run):
//
//	npm ci --prefix tests/interop --no-audit --no-fund
//	go test -race ./tests/interop
//
// On a fresh machine the tests install it themselves when node and npm are present: the
// first test binary that finds it missing runs npm ci in this directory, under an exclusive
// lock on .install.lock, so that test binaries running in parallel install it once. Without
// node or npm (or when the install fails) the tests skip, with a notice on the terminal
// saying why and how to install it, except when the environment variable CI is set: then
// they fail, so that CI can never pass by skipping them.
//
// The tests mount the tool registry, the system prompt, the MCP resources service and one
// mcpclient instance (server name "everything") in a fresh root, once per transport: stdio
// (node started by the plugin) and Streamable HTTP (the package's HTTP server started by the
// test as a child process on a free loopback port). A second connection per transport goes
// through a tap, a relay that observes what the client sends and holds the client's
// notifications/initialized until the first tools/list has been answered: the pinned server
// registers its capability-dependent tools when it receives that notification, so holding it
// makes them arrive after the first discovery, through tools/list_changed, deterministically.
// The tap also shows when a tools/call has reached the server, so the cancellation test
// cancels a call that is really in flight and sees notifications/cancelled go out.
//
// The tests are Unix-only: they manage process groups and a Unix socket.
package interop
