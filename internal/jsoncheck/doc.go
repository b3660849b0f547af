// Package jsoncheck is the tool registry's fast path for validating JSON text against a
// JSON schema: a scan of the text that accepts the instances of the common subset of tool
// schemas (types, properties, required, additionalProperties, items, enum, const, string and
// number bounds) without decoding them, a single-pass decoder, and a checker of the decoded
// value. github.com/google/jsonschema-go stays the authority: every instance the fast path
// does not accept is decided, and every rejection explained, by its resolved schema, and the
// fuzz targets FuzzSchemaCheck and FuzzDecodeJSON compare the two.
//
// It exists because it pays on a stdio tool call: see BenchmarkValidationPaired in
// plugins/toolregistry and docs/performance.md ("Argument validation: the fast path versus
// jsonschema-go alone"); docs/design.md says why it is kept.
package jsoncheck
