#!/usr/bin/env bash
# Side-by-side benchmark: the workspace server's grep tool (pure Go, called through MCP)
# against ripgrep and GNU grep, over a copy of the Go standard library's source, on six
# patterns (rare and common literals, regexps with and without a literal, case-insensitive,
# no match). Prints a markdown table: median ms of each (warm cache), the ratios, and the
# matching lines each counted (docs/performance.md has the last run).
#
# Usage: bench/grepbench.sh [--smoke] [--rounds N]
#   --smoke   CI: one pattern, one round (ripgrep only if installed); fails when the tool fails
#   --rounds  timed runs per tool and pattern (default 5)
#
# ripgrep comes from the OS packages (apt-get install -y ripgrep), installed here when missing.
set -euo pipefail

smoke=()
rounds=5
while [ $# -gt 0 ]; do
	case $1 in
	--smoke) smoke=(-smoke) ;;
	--rounds)
		rounds=$2
		shift
		;;
	-h | --help)
		sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "grepbench: unknown argument: $1" >&2
		exit 2
		;;
	esac
	shift
done

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

if [ ${#smoke[@]} -eq 0 ] && ! command -v rg >/dev/null 2>&1; then
	echo "grepbench: installing ripgrep (apt-get install -y ripgrep)" >&2
	if ! apt-get install -y ripgrep >/dev/null 2>&1; then
		apt-get update >/dev/null && apt-get install -y ripgrep >/dev/null
	fi
fi

mkdir -p bench/results
go run ./bench/grepbench -rounds "$rounds" "${smoke[@]}" | tee bench/results/grepbench.md
