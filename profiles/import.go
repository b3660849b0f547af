package profiles

import (
	"errors"
	"maps"
	"slices"

	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient/serverdoc"
)

// ImportBase is the built-in profile an imported document extends.
const ImportBase = "cli"

// ImportOptions say what to import.
type ImportOptions struct {
	// Source names the document in errors, warnings and the generated header.
	Source string
	// From is the host the document is written for (see [serverdoc.Hosts]); "" detects
	// the dialect.
	From string
	// Op names the operation in errors: "mcp import" (default) or "profile".
	Op string
}

// An Import is a server document converted to profile YAML.
type Import struct {
	// YAML is the profile: one mcpclient row per server, extending the built-in cli profile.
	YAML []byte
	// Warnings name the keys that were dropped or converted (also written into the YAML's
	// header comment).
	Warnings []string
}

// ImportMCPServers converts a JSON document in the common MCP form
//
//	{"mcpServers": {"NAME": {"command": "…", "args": […], "env": {…}, "cwd": "…"},
//	                "NAME2": {"type": "http", "url": "…", "headers": {…}}}}
//
// or any other dialect [serverdoc.Read] reads (VS Code's servers and inputs, Codex's
// config.toml) into profile YAML: see [ImportServers]. source names the document.
func ImportMCPServers(data []byte, source string) ([]byte, error) {
	im, err := ImportServers(data, ImportOptions{Source: source})
	if err != nil {
		return nil, err
	}
	return im.YAML, nil
}

// ImportServers converts another host's server document ([serverdoc.Read]) into profile
// YAML ([serverdoc.Document.Profile]): one mcpclient row per server, in the document's
// order, in a profile that extends the built-in "cli" profile so that it runs as is.
//
// Each server becomes a row whose id is the server name (prefixed with "mcp-" if it would
// replace a row of the base profile, or starts with '_' or '-', which a row id cannot) and whose config holds serverName, transport and the
// server's fields:
//   - "command" (with "args", "env", "cwd") is transport stdio;
//   - "url" (with "headers") is transport streamable-http; "type" may say stdio, http,
//     streamable-http, streamableHttp or sse (the client falls back to legacy SSE by
//     itself when a server rejects Streamable HTTP);
//   - "disabled": true (Codex: enabled = false) becomes enabled: false;
//   - keys without a counterpart (Cline's autoApprove and alwaysAllow, VS Code's envFile,
//     …) are dropped with a warning; any other unknown field is an error naming the
//     server and the key.
//
// References keep working: ${VAR} and ${VAR:-default} are the harness's syntax too,
// ${env:VAR} becomes ${VAR}, and VS Code's ${input:ID} becomes ${secret:ID} (store the
// value in the credentials file). Codex expands nothing, so a "${" in its values is
// escaped.
//
// Server names must match ^[A-Za-z0-9_-]{1,32}$ and differ in more than case. The result
// loads with Load. Errors are [*Error] values.
func ImportServers(data []byte, opts ImportOptions) (*Import, error) {
	doc, err := serverdoc.Read(data, serverdoc.ReadOptions{Source: opts.Source, From: opts.From, Op: opts.Op})
	if err != nil {
		return nil, importError(opts, err)
	}
	out, err := doc.Profile(serverdoc.ProfileOptions{Source: opts.Source, Op: opts.Op, Extends: ImportBase, Taken: baseRowIDs()})
	if err != nil {
		return nil, importError(opts, err)
	}
	return &Import{YAML: out, Warnings: doc.Warnings}, nil
}

// importError is a problem of another host's document as an [*Error], classified by this
// package's sentinels.
func importError(opts ImportOptions, err error) *Error {
	op := opts.Op
	if op == "" {
		op = "mcp import"
	}
	e := &Error{Op: op, Source: opts.Source, Msg: err.Error(), Err: errors.Join(ErrInvalid, err)}
	var ce *ctx.ConfigError
	if !errors.As(err, &ce) {
		return e
	}
	e.Line, e.Path, e.Msg = ce.Line, ce.Key, ce.Msg
	for _, k := range []struct{ from, to error }{
		{serverdoc.ErrSyntax, ErrSyntax}, {serverdoc.ErrUnknownKey, ErrUnknownKey}, {serverdoc.ErrType, ErrType},
		{serverdoc.ErrDuplicate, ErrDuplicate}, {serverdoc.ErrInvalid, ErrInvalid},
	} {
		if errors.Is(ce.Err, k.from) {
			e.Err = errors.Join(k.to, ce.Err)
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
