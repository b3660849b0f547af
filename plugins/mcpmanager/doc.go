// Package mcpmanager is the mcpManager service: it runs the MCP servers a user configures
// in a settings file, plus the servers plugins register for their own lifetime, one
// [mcpclient.Plugin] instance per server, and reports their status to management surfaces
// (list, watch, restart, probe, the mcp-manager/status event, and the remote methods
// mcpManager/*).
//
// # Settings file
//
// [Config.SettingsFile] names a YAML file with one key, servers, a mapping from server name
// to entry, kept in document order:
//
//	servers:
//	  github:
//	    transport: streamable-http
//	    url: https://api.githubcopilot.com/mcp/
//	    headers:
//	      Authorization: "Bearer ${secret:github}"
//	  files:
//	    enabled: false
//	    transport: stdio
//	    command: npx
//	    args: ["-y", "@modelcontextprotocol/server-filesystem", "${HOME}/src"]
//	    env:
//	      LOG_LEVEL: "${FILES_LOG_LEVEL:-info}"
//
// A name matches ^[A-Za-z0-9_-]{1,32}$; it is the server's serverName, so it names its tools
// (mcp__<name>__<tool>). An entry is an [mcpclient.Config] without serverName (camelCase
// keys, the client's defaults for omitted keys), plus enabled (default true). It is decoded
// by the same strict decoder as a profile's mcpclient row ([ctx.DecodeInto]), with the same
// messages: an unknown key (also one in the wrong case, such as Command), a wrong type, a
// bad name or a template syntax error rejects the whole file, and every problem of the file
// is reported at once, each a [*ctx.ConfigError] with the file, line and key path.
//
// The file may also be another host's server document, read directly ([serverdoc.Read]):
// {"mcpServers": …} (Claude Desktop/Code, Cursor, gemini-cli, Cline), VS Code's servers and
// inputs, or Codex's config.toml; keys without a counterpart are logged as warnings.
// The file is read by [serverdoc.ReadSettings]; [serverdoc.CheckFile] reports everything
// statically wrong with a file without running it. An empty file is rejected too (a file caught half-written, truncated to
// nothing, must not stop every server); write "servers: {}" to configure none. A file that
// does not exist configures no servers.
//
// # Templates
//
// The string fields command, args, env values, cwd, url and header values may contain
// references, resolved each time the server is mounted or probed (never when the file is
// read, and never shown: views show the entry as written). The syntax and the resolution
// are the client's ([secrets.Resolver], [mcpclient.Config.Expand]),
// the same for a profile's mcpclient rows:
//
//	${VAR}             the environment variable VAR; an error if it is unset
//	${VAR:-default}    VAR, or default when VAR is unset or empty
//	${secret:NAME}     the secret NAME from the credentials provider
//	$${                a literal "${"
//
// Secrets come from the [secrets.CredentialsKey] service when a plugin provides one, otherwise
// from a [secrets.FileCredentials] file ([Config.CredentialsFile], mode 0600). A missing variable, a
// missing secret or a missing credentials provider is an error of that server only: it is
// shown failed, with the reference that could not be resolved, and the others run.
//
// # Reload
//
// The settings file's directory is watched (fsnotify; polling when the directory is missing
// or watching is unavailable). After a change the file must stay quiet for
// [Config.DebounceMs] before it is read, and each read is a fresh parse. A file that cannot
// be read or parsed is rejected with a logged error, reported in [SettingsStatus], and the
// last good configuration keeps running. A good file is reconciled entry by entry: an
// unchanged entry keeps its instance (process and session); a changed one is replaced; a
// removed or disabled one is disposed; a new one is mounted. Each server name has its own
// worker (a [ctx.Worker] of the manager's scope), so mounts and disposals of different servers run in parallel and one
// slow server never delays another, while the replacements of one server (reloads,
// restarts, registration changes) happen one at a time and never overlap.
//
// The manager watches the file itself with fsnotify (the library koanf's file provider
// uses) rather than through that provider: the provider stops for good when the file is
// removed, cannot watch a file that does not exist yet, and merges reloads into one koanf
// instance. Parsing uses yaml.v3 nodes directly so that document order and line numbers
// survive.
//
// # Registered servers
//
// [Manager.Register] adds a server as an effect of the calling plugin's context: it runs
// while registered, and its disposer returns once the instance — and so its tools — are
// gone. Names are unique across configured (even disabled) and registered servers.
//
// # Status
//
// Clients report their connection state to the manager through the [mcpclient.StatusSink]
// service it provides. [Manager.List] shows configured entries in document order, then
// registered entries, then retained records of removed entries (an instance still
// stopping, or one whose cleanup is incomplete); see [View] and [State]. Every change is
// published to [Manager.Watch] subscribers (latest wins for slow readers) and as
// [StatusEvent]. No view, event, log line or error of the manager carries a secret: entries
// are shown redacted ([mcpclient.Config.Redacted]) with templates unresolved, and every
// resolved value long enough to be a credential is scrubbed from server-provided text.
//
// # Cleanup incomplete
//
// When a client reports that a server's process group could not be confirmed gone (or its
// disposal does not finish within 30 s), the name is blocked for the manager's lifetime:
// no new instance is mounted (two processes of one server must never overlap), restart
// and probe are refused with [ErrCleanupIncomplete], and the view says cleanup-incomplete
// — also as a retained record when the entry is removed. Only a host restart clears it.
//
// # Remote methods
//
// The manager exposes, for plugins/remote:
//
//	mcpManager/list     call    → Snapshot
//	mcpManager/watch    stream  → Snapshot, again after every change
//	mcpManager/restart  call    {"name"} → {"server": View}
//	mcpManager/probe    call    {"name", "options": ProbeOptions} → ProbeResult
//	mcpManager/login    stream  {"name", "noBrowser"} → LoginEvent{url}, then LoginEvent{done}
//	mcpManager/logout   call    {"name"} → LoginEvent{done}
//	mcpManager/setEnabled call  {"name", "enabled"} → EnabledResult (edits the settings file)
//	mcpManager/progress stream  → CallProgress for each request in flight, then each change
//
// mcpManager/progress reports the progress of tools/call and resources/read requests of
// every MCP client in the tree (managed servers and profile rows: the
// [mcpclient.ProgressEvent]s): first the latest value of each request already in flight,
// then each new value, and a value with Done set when a request ends. A slow reader gets
// each request's latest value rather than every intermediate one; a Done is never lost.
// Requests that report no progress do not appear.
//
// Login runs the OAuth flow in the host (docs/authorization.md): the live instance, which
// shares the credentials key, connects as soon as the token is stored, without a restart.
// A server waiting for a login is in state needs-auth and spends no reconnect budget.
// Neither method, nor any view, carries a token.
//
// Errors are [*Error]s, whose codes (not_found, conflict, unavailable, bad_request) the
// remote API sends as is.
//
// # Concurrency
//
// [Manager] is safe for concurrent use; see its documentation. Values it returns (views,
// snapshots, probe results) are copies.
package mcpmanager
