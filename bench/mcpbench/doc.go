// Package mcpbench measures the MCP client side of the harness against the same stdio
// server: the demo server, served by the harness binary (`harness demo-server`), tool
// echo.
//
// Three clients make the same calls:
//
//   - harness: a ctx root with the tool registry and one mcpclient row mounted, calling
//     Registry.Execute("mcp__demo__echo") — the path a model's tool call takes;
//   - gosdk: a bare go-sdk client (mcp.CommandTransport + ClientSession.CallTool);
//   - ts: the official TypeScript SDK client (bench/ts/calls.mjs, Client +
//     StdioClientTransport from @modelcontextprotocol/sdk, pinned in bench/ts).
//
// Every client speaks protocol version 2025-11-25 (the harness pins it for stdio, the
// TypeScript SDK's newest, and the go-sdk client is asked for it), so the wire traffic is
// the same.
//
// The measurements are run by the program in cmd/mcpbench, one process per measurement,
// and bench/mcpbench.sh runs them all and prints the table that docs/performance.md
// records:
//
//   - calls: tool-call throughput and latency (p50, p99) at a given concurrency;
//   - rss: the peak RSS (VmHWM) of a host process with N connected servers;
//   - rss-run: the same for the real binary (`harness -p cli --stdio … run`);
//   - startup: wall time until every server's tools are registered, for N servers mounted
//     in parallel, one after another, and one alone.
//
// The tests in this package are fast and run with `go test ./...`; the benchmarks
// (BenchmarkCallStdio…) run only with -bench, against the harness binary named by
// MCPBENCH_HARNESS or, without it, the test binary serving the demo server itself.
package mcpbench
