#!/usr/bin/env bash
# Tool search against bleve: runs bench/bleveeval/main.go, which indexes the evaluation
# catalog (toolsearch/testdata) with bleve and with toolsearch and prints
# Recall@1, Recall@5 and MRR of each on the dev half, the held-out half and all tasks, as
# docs/tool-search.md reports them.
#
# bleve is not a dependency of the harness module: the program is built as a module of its
# own in a temporary directory — bleve at the version below, the harness through a replace
# to this repository — so the harness's go.mod never names bleve.
#
# Usage: bench/bleveeval.sh [flags of the program: -catalog FILE -tasks FILE]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bleve_version=v2.6.3

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# the file carries the build tag ignore so that the harness module leaves it out; here it is
# the module's only file
sed '/^\/\/go:build ignore$/d' "$root/bench/bleveeval/main.go" >"$tmp/main.go"
cd "$tmp"
go mod init bleveeval >/dev/null 2>&1
go mod edit -require="github.com/blevesearch/bleve/v2@$bleve_version" \
  -require=github.com/cordisgo/harness@v0.0.0 -replace="github.com/cordisgo/harness=$root"
go mod tidy >/dev/null
go vet .
go run . -catalog "$root/toolsearch/testdata/catalog.json" -tasks "$root/toolsearch/testdata/tasks.tsv" "$@"
