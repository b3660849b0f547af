// Package doccheck holds the test that type-checks every ```go block of README.md and
// docs/*.md against the module, so that the examples the docs show compile. It has no code
// of its own; the conventions a block follows are described on TestDocBlocksCompile.
package doccheck
