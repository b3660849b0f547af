// Package demoserver is the embedded demo MCP server.
//
// It backs the `harness demo-server` command, the MCP client of the built-in
// default profile (so a fresh install does something real with no setup), and
// the tests and benchmarks across the repository. Everything is built on the
// go-sdk (github.com/modelcontextprotocol/go-sdk); there is no hand-written
// JSON-RPC here.
//
// # Tools
//
//   - echo {text}: returns text unchanged.
//   - add {a, b}: returns the sum as text and as structured content {"sum": …},
//     with an output schema.
//   - slow {ms}: waits ms milliseconds (default 1000, at most 600000), returns
//     promptly when the request is cancelled, and reports progress when the
//     caller supplies a progress token.
//   - image {}: returns an 8x8 PNG gradient as image content (image/png).
//   - fail {message?}: returns a tool result with isError set.
//   - add_tool {name}: registers a tool named extra_<name> at run time, so the
//     server sends notifications/tools/list_changed to connected sessions.
//   - big {bytes}: returns a text result of exactly that many bytes (at most
//     16 MiB), for output-cap tests. Over stdio, a result close to the cap
//     makes a frame larger than the go-sdk client's default 16 MiB line
//     limit, which such a client reports as an error.
//   - ask {mode?}: asks the client's user (elicitation). Mode form (the default)
//     requests a form — a name, an age from 1 to 150, a colour of three titled
//     choices and a yes/no, each with a default, and a write-only token — and
//     returns "accept: age=36, color=green, ..." (the token by its length only),
//     "decline" or "cancel". Mode url asks the user to visit a page and, once
//     accepted, reports the elicitation complete, pings the client (whose
//     answer means the completion was handled) and returns "accept: confirmed
//     ID". The tool asks through input requests (SEP-2322), which the SDK turns
//     into elicitation/create for clients of older protocol versions; a client
//     without the elicitation capability gets an error.
//
// Every tool has a generated JSON input schema with descriptions, required
// fields and bounds; out-of-range arguments come back as tool errors.
//
// # Resources
//
//   - demo://readme (text/markdown)
//   - demo://config.json (application/json), which lists the tools add_tool added
//     (extraTools): it can be subscribed to (resources/subscribe; the others,
//     which never change, are refused), and each new tool sends its subscribers
//     notifications/resources/updated
//   - demo://logo.png (image/png, a blob: the same PNG as the image tool)
//   - the template demo://notes/{id} (text/plain), a generated note per id
//
// # Prompts
//
//   - review {file, focus?}: asks for a review of file ("Please review FILE, looking at
//     FOCUS first."); focus completes to correctness, performance, readability, security
//     and tests.
//   - logo {}: four messages — a text, the logo as an image, the readme as an embedded
//     resource and a link to demo://logo.png.
//
// Completions (completion/complete) also offer the ids 1 to 9 of demo://notes/{id}.
//
// # Serving
//
// [New] returns a ready *mcp.Server to connect to any transport (tests use
// mcp.NewInMemoryTransports). [ServeStdio] serves one session over
// stdin/stdout, [Handler] returns a Streamable HTTP handler, and [ServeHTTP]
// listens on a loopback address and serves that handler at /mcp.
package demoserver
