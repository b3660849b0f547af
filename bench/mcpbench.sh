#!/usr/bin/env bash
# Side-by-side benchmark of MCP clients against one stdio server: the demo server of the
# harness binary (`harness demo-server`, tool echo), the same binary for every client.
#   calls    tool-call throughput and p50/p99 latency at concurrency 1 and 16 for
#            harness  - Registry.Execute("mcp__demo__echo") through the mcpclient plugin,
#                       with the harness binary's runtime policies (internal/gcpolicy,
#                       internal/procpolicy)
#            harness-gogc100 - the same host with Go's default GC and GOMAXPROCS
#            gosdk    - a bare go-sdk ClientSession.CallTool over mcp.CommandTransport
#            ts       - the official TypeScript SDK client (bench/ts/calls.mjs)
#   memory   peak RSS (VmHWM) of a harness host with 1 and with 20 connected servers
#            (in-process host, and the real binary: harness -p cli --stdio … run), next
#            to the TypeScript client's with one
#   startup  wall time until the tools of 20 servers are registered: mounted in
#            parallel, one after another, and one server alone
#   go test  BenchmarkCallStdio[C16]: ns/op, B/op and allocs/op of both Go clients
#
# Usage: bench/mcpbench.sh [--ctx] [--check] [--smoke]
#   --ctx    afterwards, also run bench/ctxbench.sh (scope tree vs Cordis; minutes)
#   --check  exit with status 3 unless every goal is met
#   --smoke  a short run that only proves the benchmark works (CI): the Go clients only (no
#            npm), one round of 200 calls per concurrency, 2 servers, one memory and one
#            startup round, go test -bench 200x; any failing step fails the script
#
# Environment knobs (defaults in brackets):
#   MCPBENCH_ROUNDS [5]           runs per client and concurrency, interleaved; medians
#   MCPBENCH_CALLS_C1 [5000]      timed calls per run at concurrency 1
#   MCPBENCH_CALLS_C16 [20000]    timed calls per run at concurrency 16
#   MCPBENCH_WARMUP [500]         untimed calls before each run
#   MCPBENCH_MAX_SECONDS [30]     bound on the timed part of one run
#   MCPBENCH_SERVERS [20]         servers for the memory and startup measurements
#   MCPBENCH_STARTUP_ROUNDS [7]   startup rounds of each kind; medians
#
# Prints a markdown table with the ratios and the goals of issue 8, and the machine it ran
# on. Raw results go to bench/results/ (ignored by git). About 6–8 minutes on 2 vCPUs.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_flags mcpbench check ctx smoke -- "$@"

rounds=${MCPBENCH_ROUNDS:-5}
calls_c1=${MCPBENCH_CALLS_C1:-5000}
calls_c16=${MCPBENCH_CALLS_C16:-20000}
warmup=${MCPBENCH_WARMUP:-500}
max_seconds=${MCPBENCH_MAX_SECONDS:-30}
servers=${MCPBENCH_SERVERS:-20}
startup_rounds=${MCPBENCH_STARTUP_ROUNDS:-7}
memory_rounds=3
gobench_n=3000x
gobench_count=3
clients=(harness harness-gogc100 gosdk ts)
if [ "$smoke" -eq 1 ]; then
	rounds=1 calls_c1=200 calls_c16=200 warmup=20 max_seconds=10 servers=2 startup_rounds=1
	memory_rounds=1 gobench_n=200x gobench_count=1
	clients=(harness gosdk)
fi

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

needs=(go)
[ "$smoke" -eq 1 ] || needs+=(node npm)
bench_need mcpbench "${needs[@]}"
if [ ! -r /proc/self/status ]; then
	echo "mcpbench: needs Linux (/proc) to read peak RSS" >&2
	exit 2
fi

results=bench/results
mkdir -p "$results"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "mcpbench: building the harness and the benchmark program" >&2
go build -o "$tmp/harness" ./cmd/harness
go build -o "$tmp/mcpbench" ./bench/mcpbench/cmd/mcpbench
harness=$tmp/harness
mcpbench=$tmp/mcpbench

sdk_version="not run (--smoke)"
if [ "$smoke" -eq 0 ]; then
	if [ ! -d bench/ts/node_modules/@modelcontextprotocol/sdk ]; then
		echo "mcpbench: installing the pinned TypeScript SDK (npm ci)" >&2
		npm ci --prefix bench/ts --no-audit --no-fund >&2
	fi
	sdk_version=$(node -p 'require("./bench/ts/node_modules/@modelcontextprotocol/sdk/package.json").version')
fi

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
out=$results/mcpbench.jsonl
: >"$out"
# A Go client's call in flight for 20 s dumps the client's goroutines to stderr and the
# server's (SIGQUIT) to this file: a diagnosis, should a call ever hang.
server_stderr=$results/server-stderr.log
: >"$server_stderr"

# run_calls CLIENT CONCURRENCY CALLS appends one JSON line to $out.
run_calls() {
	local client=$1 c=$2 n=$3
	if [ "$client" = ts ]; then
		node bench/ts/calls.mjs --command "$harness" --arg demo-server \
			-c "$c" -n "$n" --warmup "$warmup" --max-seconds "$max_seconds" >>"$out"
	else
		"$mcpbench" calls -client "$client" -harness "$harness" \
			-c "$c" -n "$n" -warmup "$warmup" -max-seconds "$max_seconds" \
			-stall 20s -server-stderr "$server_stderr" >>"$out"
	fi
}

echo "mcpbench: calls, $rounds rounds (c=1: $calls_c1 calls, c=16: $calls_c16 calls per run)" >&2
for ((r = 0; r < rounds; r++)); do
	for c in 1 16; do
		n=$calls_c1
		[ "$c" = 16 ] && n=$calls_c16
		# Rotate the order every round so that no client always runs first or last.
		for ((k = 0; k < ${#clients[@]}; k++)); do
			client=${clients[$(((r + k) % ${#clients[@]}))]}
			echo "mcpbench:   round $((r + 1)) c=$c $client" >&2
			run_calls "$client" "$c" "$n"
		done
	done
done

echo "mcpbench: memory (peak RSS), $memory_rounds rounds" >&2
for ((r = 0; r < memory_rounds; r++)); do
	"$mcpbench" rss -harness "$harness" -servers 1 >>"$out"
	"$mcpbench" rss -harness "$harness" -servers "$servers" >>"$out"
	"$mcpbench" rss-run -harness "$harness" -servers 1 >>"$out"
	"$mcpbench" rss-run -harness "$harness" -servers "$servers" >>"$out"
	if [ "$smoke" -eq 0 ]; then
		node bench/ts/calls.mjs --command "$harness" --arg demo-server --rss >>"$out"
	fi
done

echo "mcpbench: startup of $servers servers, $startup_rounds rounds" >&2
"$mcpbench" startup -harness "$harness" -servers "$servers" -rounds "$startup_rounds" >>"$out"

echo "mcpbench: go test -bench CallStdio" >&2
gobench=$results/mcpbench-gobench.txt
if ! MCPBENCH_HARNESS=$harness go test -run '^$' -bench 'CallStdio' -benchtime "$gobench_n" -count "$gobench_count" \
	./bench/mcpbench/ >"$gobench" 2>&1; then
	cat "$gobench" >&2
	echo "mcpbench: go test -bench failed" >&2
	exit 1
fi

load_end=$(cut -d' ' -f1-3 /proc/loadavg)

cpu_model=$(bench_cpu)
mem_total=$(awk '/^MemTotal:/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo 2>/dev/null || true)

{
	"$mcpbench" table -load-start "$load_start" -load-end "$load_end" -gobench "$gobench" <"$out"
	echo
	echo "Machine: $(nproc) CPUs (nproc), ${cpu_model:-unknown CPU}, ${mem_total:-? GiB}, $(uname -sm)"
	echo "Go:      $(go version)"
	echo "Node:    $(node --version 2>/dev/null || echo none), @modelcontextprotocol/sdk $sdk_version"
	echo "Server:  harness demo-server (tool echo), the same binary for every client"
	echo "Command: bench/mcpbench.sh$([ "$smoke" -eq 1 ] && echo ' --smoke') ($(date -u +%Y-%m-%dT%H:%MZ)); scope tree vs Cordis: bench/ctxbench.sh or --ctx"
} | tee "$results/mcpbench.md"

status=0
if [ "$check" -eq 1 ] && ! grep -Eq '^Goals met: ([0-9]+) of \1\.$' "$results/mcpbench.md"; then
	status=3
fi
if [ "$ctx" -eq 1 ]; then
	echo >&2
	echo "mcpbench: running bench/ctxbench.sh" >&2
	bash bench/ctxbench.sh
fi
exit "$status"
