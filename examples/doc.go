// Package examples keeps the examples of docs/plugins.md as code that go test compiles and
// runs: every Go block of that page is a file or a function here (or in a package below),
// with Examples whose output is checked, and internal/doccheck fails when a block differs
// from its source. The packages below hold the page's whole-file and declaration examples
// (clock, config, service, layers, clockbinary); this one the fragments written as function
// bodies.
package examples
