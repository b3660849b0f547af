package profiles

import (
	"errors"
	"maps"
	"slices"

	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/cordisgo/harness/ctx"
)

// ImportBase is the built-in profile an imported document extends.
const ImportBase = "cli"

// A ServerReader reads other hosts' server documents — {"mcpServers": …} (Claude
// Desktop and Code, Cursor, gemini-cli, Cline, Roo), VS Code's servers and inputs,
// Codex's config.toml — for [Load] and [ImportServers]. This package has none of its
// own: reading them takes the MCP client's configuration types, and loading a profile
// links nothing of the MCP client. The host installs one (the harness binary passes
// host.ServerDocuments); without it, such a file is refused with an error that says so.
//
// A ServerReader is called from any goroutine and must be safe for concurrent use.
type ServerReader interface {
	// IsForeign reports whether data, read from the file name, is another host's server
	// document rather than a profile.
	IsForeign(name string, data []byte) bool
	// Profile converts such a document into profile YAML: one mcpclient row per server,
	// in the document's order, in a profile that extends opts.Extends. Warnings name the
	// keys it dropped or converted. Its errors are [*ctx.ConfigError] values whose Err
	// is one of ctx's kinds (ctx.ErrSyntax, ctx.ErrUnknownKey, ctx.ErrWrongType,
	// ctx.ErrDuplicateKey) when the problem is one of those.
	Profile(data []byte, opts ServerDocOptions) (yaml []byte, warnings []string, err error)
}

// ServerDocOptions say how a [ServerReader] converts a document.
type ServerDocOptions struct {
	// Source names the document in errors, warnings and the generated header.
	Source string
	// From is the host the document is written for; "" detects the dialect.
	From string
	// Op names the operation in errors: "mcp import" or "profile".
	Op string
	// Extends is the profile the result extends.
	Extends string
	// Taken are the row ids of the extended profile: a server named like one of them (in
	// any case) gets the row id "mcp-NAME" instead, so that it adds a row rather than
	// replacing one.
	Taken []string
}

// ImportOptions say what to import.
type ImportOptions struct {
	// Source names the document in errors, warnings and the generated header.
	Source string
	// From is the host the document is written for (the reader's names, such as
	// "claude-code" or "codex"); "" detects the dialect.
	From string
	// Op names the operation in errors: "mcp import" (default) or "profile".
	Op string
	// Servers reads the document; nil fails with an error that says one is needed.
	Servers ServerReader
}

// An Import is a server document converted to profile YAML.
type Import struct {
	// YAML is the profile: one mcpclient row per server, extending the built-in cli profile.
	YAML []byte
	// Warnings name the keys that were dropped or converted (also written into the YAML's
	// header comment).
	Warnings []string
}

// ImportServers converts another host's server document into profile YAML with
// opts.Servers: one mcpclient row per server, in the document's order, in a profile that
// extends the built-in "cli" profile so that it runs as is. A server named like a row of
// that profile gets the row id "mcp-NAME". The result loads with Load. Errors are
// [*Error] values whose Op is opts.Op ("mcp import" by default), classified by this
// package's sentinels.
func ImportServers(data []byte, opts ImportOptions) (*Import, error) {
	if opts.Op == "" {
		opts.Op = "mcp import"
	}
	if opts.Servers == nil {
		return nil, &Error{Op: opts.Op, Source: opts.Source, Err: ErrInvalid,
			Msg: "another host's server document ({\"mcpServers\": …}, VS Code's mcp.json, Codex's config.toml) " +
				"is read only through a server-document reader, and none is installed (the harness binary " +
				"installs one; a program that loads profiles passes host.ServerDocuments as LoadOptions.Servers)"}
	}
	out, warnings, err := opts.Servers.Profile(data, ServerDocOptions{Source: opts.Source, From: opts.From, Op: opts.Op,
		Extends: ImportBase, Taken: baseRowIDs()})
	if err != nil {
		return nil, importError(opts, err)
	}
	return &Import{YAML: out, Warnings: warnings}, nil
}

// importError is a problem of another host's document as an [*Error]: its kind is ctx's
// (which ErrSyntax, ErrUnknownKey, ErrType and ErrDuplicate are), else ErrInvalid.
func importError(opts ImportOptions, err error) *Error {
	e := &Error{Op: opts.Op, Source: opts.Source, Msg: err.Error(), Err: errors.Join(ErrInvalid, err)}
	var ce *ctx.ConfigError
	if !errors.As(err, &ce) {
		return e
	}
	e.Line, e.Path, e.Msg = ce.Line, ce.Key, ce.Msg
	for _, kind := range []error{ErrSyntax, ErrUnknownKey, ErrType, ErrDuplicate} {
		if errors.Is(ce.Err, kind) {
			e.Err = ce.Err
			break
		}
	}
	return e
}

// baseRowIDs returns the top-level row ids of the import base profile.
func baseRowIDs() []string {
	data, _ := Builtin(ImportBase)
	var doc struct {
		Plugins map[string]any `yaml:"plugins"`
	}
	if yamlv3.Unmarshal(data, &doc) != nil {
		return nil
	}
	return slices.Sorted(maps.Keys(doc.Plugins))
}
