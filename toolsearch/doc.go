// Package toolsearch ranks tools for a free-text task, so that a large fleet's tools need
// not all be sent to a model on every request: the model gets a few tools plus a search,
// and the tools it finds are loaded with their exact schemas.
//
// # The index
//
// [New] indexes plain data — [Server]s with their [Tool]s (name, public name, title,
// description, input schema) and the servers' instructions — built from the live registry
// by plugins/toolregistry/deferral (its Servers) or read from a catalog file with
// [ReadCatalog] (the [Catalog] format). The package knows no registry: the deferral of a
// model's tool definitions, and the tool_search tool, are that package's.
// [Index.Search] returns [Hit]s, best first: each tool's server, its name as the server
// lists it, its public name, its one-line purpose, its score and (for the first
// [SearchOptions.Schemas] hits) its input schema.
//
// Ranking is BM25F over seven fields (name, title, the description's first sentence, the
// description, parameter names and descriptions, the server's name, the server's
// instructions), each with its own weight and length normalisation. Identifiers are cut at
// '_', '-', '.' and case changes ("getFileInfo", "mcp__github__create_issue"); words are
// lowercased and lightly stemmed; CJK text is indexed as character bigrams, and a small
// glossary links common Chinese words to English ones. A query word also matches its
// synonyms, indexed words one or two edits away when it is not itself indexed (typos), and
// longer indexed words it begins, each at a lower weight; a tool's score grows with the
// share of query words it matches, and a query naming a tool exactly ranks it first.
// docs/tool-search.md has the evaluation.
//
// # Concurrency
//
// An [Index] is immutable once built and safe for concurrent use; the package's functions
// are safe for concurrent use.
package toolsearch
