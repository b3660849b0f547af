# bench/lib.sh: what the side-by-side benchmark scripts share (their flags, their usage,
# the tools they need, the machine line of their tables). Sourced, never run.

# bench_usage prints the comment block at the top of the script being run, up to its
# `set -euo pipefail` line, without the comment marks.
bench_usage() {
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[-1]}" | sed '$d' | sed 's/^# \{0,1\}//'
}

# bench_flags NAME FLAG... -- ARG... sets the variable FLAG to 1 for each --FLAG among the
# ARGs and to 0 for the others. -h and --help print the usage and exit 0; any other
# argument is named (NAME: unknown argument) above the usage, and the script exits 2.
bench_flags() {
	local bench=$1 f a
	shift
	local known=()
	while [ "$1" != -- ]; do
		known+=("$1")
		printf -v "$1" 0
		shift
	done
	shift
	for a in "$@"; do
		case $a in
		-h | --help)
			bench_usage
			exit 0
			;;
		esac
		for f in "${known[@]}"; do
			if [ "$a" = "--$f" ]; then
				printf -v "$f" 1
				continue 2
			fi
		done
		echo "$bench: unknown argument: $a" >&2
		bench_usage >&2
		exit 2
	done
}

# bench_need NAME TOOL... exits 2 naming the first TOOL not found in PATH.
bench_need() {
	local bench=$1 tool
	shift
	for tool in "$@"; do
		if ! command -v "$tool" >/dev/null 2>&1; then
			echo "$bench: $tool not found in PATH" >&2
			exit 2
		fi
	done
}

# bench_cpu prints the CPU's model name, or nothing when it cannot be found.
bench_cpu() {
	local model
	model=$(awk -F': *' '/^(model name|Hardware|Processor|cpu model)[ \t]*:/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
	if [ -z "$model" ] && command -v lscpu >/dev/null 2>&1; then
		model=$(lscpu | awk -F': *' '/^Model name/ { print $2; exit }')
	fi
	printf '%s\n' "$model"
}
