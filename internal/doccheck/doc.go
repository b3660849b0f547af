// Package doccheck holds the test that type-checks every ```go block of README.md and
// docs/*.md against the module, so that the examples the docs show compile, and the test
// that every block of docs/plugins.md is kept, as shown, in examples, where go
// test runs it. It has no code of its own; the conventions a block follows are described on
// TestDocBlocksCompile and TestDocBlocksHaveSources.
package doccheck
