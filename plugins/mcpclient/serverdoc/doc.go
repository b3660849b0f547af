// Package serverdoc owns the documents that describe MCP servers outside a profile: other
// hosts' server lists ({"mcpServers": …} of Claude, Cursor, gemini-cli, Cline and Roo,
// VS Code's mcp.json, Codex's config.toml), read and converted to typed
// [mcpclient.Config] values, and rendered as profile rows.
//
// It is the one place that knows these formats: profiles loads another host's document
// through it, and the MCP manager reads one as its settings file. Its problems are
// [*ctx.ConfigError] values naming the document, the line when known and the key path.
//
// Its functions are pure and safe for concurrent use.
package serverdoc
