#!/usr/bin/env bash
# Side-by-side benchmark: the Cordis npm package (bench/cordis) against the Go
# port (bench/ctxbench), on the same three workloads:
#   mount  - mount 10,000 plugins that each register one effect, wait until all
#            are active, dispose them all
#   emit   - one event, 100 listeners, 1,000,000 emits
#   inject - one provider appears and activates 1,000 pending dependents, then
#            leaves and unloads them
#
# Usage: bench/ctxbench.sh [--check] [--smoke]
#   --check  exit with status 3 unless Go is faster on every workload
#   --smoke  CI: the Go workloads once each, no Cordis (no npm); fails when they fail
#
# Cordis: node bench/cordis/workloads.mjs, median of 5 timed rounds per workload.
# Go:     go test -bench 'BenchmarkWorkload' -benchtime=1x -count=5, median ns/op.
# Prints a markdown table (both times in ms and the ratio Cordis/Go) and the
# machine it ran on. Raw outputs go to bench/results/ (ignored by git).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_flags ctxbench check smoke -- "$@"

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

if [ "$smoke" -eq 1 ]; then
	echo "ctxbench: smoke: the Go workloads once each" >&2
	exec go test -run '^$' -bench 'BenchmarkWorkload' -benchtime=1x -count=1 ./bench/ctxbench/
fi

bench_need ctxbench node npm go awk

results=bench/results
mkdir -p "$results"

if [ ! -d bench/cordis/node_modules/cordis ]; then
	echo "ctxbench: installing the pinned cordis package (npm ci)" >&2
	npm ci --prefix bench/cordis --no-audit --no-fund >&2
fi

echo "ctxbench: running the Cordis workloads (a few minutes)" >&2
if ! node bench/cordis/workloads.mjs >"$results/cordis.json"; then
	echo "ctxbench: the Cordis workloads failed" >&2
	exit 1
fi

# "mount <ns>" lines etc. from the single JSON line.
cordis_ns=$(node -e '
const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))
for (const w of ["mount", "emit", "inject"]) console.log(w, r.workloads[w] ?? "")
console.log("version", r.cordis)
' "$results/cordis.json")
cordis_version=$(awk '$1 == "version" { print $2 }' <<<"$cordis_ns")

echo "ctxbench: running the Go workloads" >&2
go_status=0
go test -run '^$' -bench 'BenchmarkWorkload' -benchtime=1x -count=5 ./bench/ctxbench/ \
	>"$results/go.txt" 2>&1 || go_status=$?
if [ "$go_status" -ne 0 ]; then
	cat "$results/go.txt" >&2
	echo "ctxbench: go test failed (exit $go_status); Go columns will be empty" >&2
fi

# Median ns/op per benchmark, as "mount <ns>" lines. A result line normally
# starts with the benchmark name (with a -GOMAXPROCS suffix); if the benchmark
# logged output, the numbers can come on a later line, so the last name seen
# is used for lines without one.
go_ns=$(awk '
	/^Benchmark/ { name = $1; sub(/-[0-9]+$/, "", name) }
	{
		for (i = 2; i <= NF; i++) {
			if ($i == "ns/op" && name != "") {
				n = ++count[name]
				val[name, n] = $(i - 1) + 0
				break
			}
		}
	}
	END {
		split("Mount Emit Inject", ws, " ")
		for (k = 1; k <= 3; k++) {
			b = "BenchmarkWorkload" ws[k]
			n = count[b]
			if (n == 0) { print tolower(ws[k]), ""; continue }
			# insertion sort, portable to any awk
			for (i = 1; i <= n; i++) s[i] = val[b, i]
			for (i = 2; i <= n; i++) {
				x = s[i]
				for (j = i - 1; j >= 1 && s[j] > x; j--) s[j + 1] = s[j]
				s[j + 1] = x
			}
			if (n % 2) m = s[(n + 1) / 2]
			else m = (s[n / 2] + s[n / 2 + 1]) / 2
			printf "%s %.0f\n", tolower(ws[k]), m
		}
	}
' "$results/go.txt")

cpu_model=$(bench_cpu)

table=$(CORDIS_NS=$cordis_ns GO_NS=$go_ns awk '
	function load(text, arr,   lines, i, f) {
		split(text, lines, "\n")
		for (i in lines) {
			split(lines[i], f, " ")
			if (f[1] != "") arr[f[1]] = f[2]
		}
	}
	BEGIN {
		load(ENVIRON["CORDIS_NS"], c)
		load(ENVIRON["GO_NS"], g)
		print "| workload | Cordis (ms) | Go (ms) | ratio Cordis/Go |"
		print "|---|---:|---:|---:|"
		split("mount emit inject", ws, " ")
		faster = 1
		for (k = 1; k <= 3; k++) {
			w = ws[k]
			cm = (c[w] != "") ? sprintf("%.3f", c[w] / 1e6) : "n/a"
			gm = (g[w] != "") ? sprintf("%.3f", g[w] / 1e6) : "n/a"
			if (c[w] != "" && g[w] != "" && g[w] > 0) {
				ratio = sprintf("%.2f", c[w] / g[w])
				if (c[w] / g[w] <= 1) faster = 0
			} else {
				ratio = "n/a"
				faster = 0
			}
			printf "| %s | %s | %s | %s |\n", w, cm, gm, ratio
		}
		print ""
		print "Go faster on every workload: " (faster ? "yes" : "no")
	}
')

{
	echo "$table"
	echo
	echo "Machine: $(nproc) CPUs (nproc), ${cpu_model:-unknown CPU}, $(uname -sm)"
	echo "Go:      $(go version)"
	echo "Node:    $(node --version), cordis $cordis_version"
	echo "Command: bench/ctxbench.sh ($(date -u +%Y-%m-%dT%H:%MZ))"
} | tee "$results/table.md"

if [ "$go_status" -ne 0 ]; then
	exit 1
fi
if [ "$check" -eq 1 ] && ! grep -q '^Go faster on every workload: yes$' <<<"$table"; then
	exit 3
fi
