// Package bleveeval holds the program that measures bleve, a maintained search library,
// against toolsearch's ranker on the evaluation set (main.go). The program is not
// part of the harness module, so that bleve is not one of the harness's dependencies: run it
// with bench/bleveeval.sh, which builds it as a module of its own. This file only names the
// directory's purpose; the package has no code.
package bleveeval
