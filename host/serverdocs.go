package host

import (
	"github.com/cordisgo/harness/plugins/mcpclient/serverdoc"
	"github.com/cordisgo/harness/profiles"
)

// ServerDocuments is the harness's reader of other hosts' server documents for profiles
// ([profiles.ServerReader]): {"mcpServers": …} (Claude Desktop and Code, Cursor,
// gemini-cli, Cline, Roo), VS Code's servers and inputs and Codex's config.toml, read by
// serverdoc (which the MCP manager's settings file shares). Pass it as
// profiles.LoadOptions.Servers so that such a file loads as a profile, and as
// profiles.ImportOptions.Servers to convert one ("mcp import"). It holds nothing and is
// safe for concurrent use.
type ServerDocuments struct{}

var _ profiles.ServerReader = ServerDocuments{}

// IsForeign reports whether data, read from the file name, is another host's server
// document rather than a profile ([serverdoc.IsForeign]).
func (ServerDocuments) IsForeign(name string, data []byte) bool {
	return serverdoc.IsForeign(name, data)
}

// Profile reads the document ([serverdoc.Read]) and renders it as profile rows
// ([serverdoc.Document.Profile]).
func (ServerDocuments) Profile(data []byte, opts profiles.ServerDocOptions) ([]byte, []string, error) {
	doc, err := serverdoc.Read(data, serverdoc.ReadOptions{Source: opts.Source, From: opts.From, Op: opts.Op})
	if err != nil {
		return nil, nil, err
	}
	out, err := doc.Profile(serverdoc.ProfileOptions{Source: opts.Source, Op: opts.Op, Extends: opts.Extends, Taken: opts.Taken})
	if err != nil {
		return nil, nil, err
	}
	return out, doc.Warnings, nil
}
