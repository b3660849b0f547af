#!/usr/bin/env bash
# Side-by-side benchmark of MCP gateways (issue 15): harness serve (aggregated and per-server
# routes), a floor (a bare go-sdk Streamable HTTP server forwarding through a bare go-sdk
# client session), supergateway and mcp-proxy (npm, pinned in bench/gwbench/package.json).
# Same upstream (harness demo-server over stdio, tool echo), same downstream client (a go-sdk
# Streamable HTTP session). Prints a markdown table: calls/s and p50/p99 at c=1 and c=16,
# peak RSS of the gateway's process tree, processes with 10 sessions open.
#
# Usage: bench/gwbench.sh [ROUNDS [CALLS]]   (defaults: 3 rounds of 2000 calls, 10 s cap per round)
#        bench/gwbench.sh --smoke             (CI: harness serve's two routes and the floor only,
#                                              no npm, one round of 200 calls; fails when one fails)
# Not part of go test; .ci/run runs --smoke. About 3 minutes on 2 vCPUs.
set -euo pipefail
cd "$(dirname "$0")/.."
smoke=0
if [ "${1:-}" = --smoke ]; then
	smoke=1
	shift
fi
rounds=${1:-3}
calls=${2:-2000}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -o "$out/harness" ./cmd/harness
go build -o "$out/gwbench" ./bench/gwbench
if [ "$smoke" -eq 1 ]; then
	cd bench/gwbench
	exec "$out/gwbench" run -harness "$out/harness" -rounds 1 -calls 200 -max 5s -only "harness serve,floor" -strict
fi
if [ ! -d bench/gwbench/node_modules ]; then
	npm ci --prefix bench/gwbench --no-audit --no-fund >&2
fi
cd bench/gwbench
"$out/gwbench" run -harness "$out/harness" -rounds "$rounds" -calls "$calls"
