// Package ptcinterop holds the PTC tests that need npm packages: the declarations of every
// tool of @modelcontextprotocol/server-everything and of the demo server type-check with
// tsc, and the data task of docs/ptc.md runs against @modelcontextprotocol/server-filesystem.
// The packages are pinned in package.json and installed by the tests themselves (npm ci,
// once) or by .ci/run.
package ptcinterop
