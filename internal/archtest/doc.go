// Package archtest holds the test that enforces the import rules of the project's design
// (docs/design.md, "Layout and dependency rules"). It has no code of its own.
package archtest
