// Package transport owns what is below an MCP client's session. For a Streamable HTTP
// server: the SDK transports with the configured headers, and the fallback to legacy
// HTTP+SSE ([HTTP]). For a stdio server: its process in a process group of its own (the
// whole tree it spawns is signalled at once, grandchildren included, and confirmed gone
// before another starts: [ErrCleanupIncomplete] otherwise), its stderr kept in a bounded
// ring ([TailBuffer]), the environment it inherits ([Inherit], [Scrubbed],
// [MinimalEnvNames]), the refusal of an interpreter's missing script ([MissingScript]), and
// a host's last resort before it exits at once ([KillProcessGroups]).
//
// plugins/mcpclient dials through it; it never imports mcpclient.
package transport
