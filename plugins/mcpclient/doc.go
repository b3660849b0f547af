// Package mcpclient connects the harness to MCP servers: one [Plugin] instance per server,
// mounted in the scope whose agents may use it, turns the server's tools into ordinary
// tools of the tool registry, its instructions into a system-prompt section and its
// resources into a provider of the shared resource tools. All protocol work goes through
// the go-sdk.
//
// # Configuration
//
// The plugin's configuration is [Config], decoded strictly with camelCase keys (every
// error names the server and the key):
//
//	serverName           local name, ^[A-Za-z0-9_-]{1,32}$, unique in its registration scope
//	transport            "stdio" or "streamable-http"
//	command, args        stdio: the server's executable and arguments (no shell)
//	env, cwd             stdio: explicit variables (they always win) and working directory
//	inheritEnv           stdio: {mode: scrubbed | minimal | all | none, extra: [NAMES]} (default scrubbed:
//	                     everything but names containing KEY, PASSWORD, SECRET or TOKEN, and HARNESS_*)
//	url, headers         streamable-http: endpoint and headers sent on every request
//	toolCallTimeoutMs    bound of one call or resource request (60000)
//	startupTimeoutMs     bound of one connection attempt: connect + discovery (60000)
//	failOnStartupError   fail activation when the first attempt fails (false)
//	reconnect            {enabled: true, initialDelayMs: 500, maxDelayMs: 30000, maxAttempts: 10}
//	maxInstructionBytes  cap of the attributed instructions in the prompt (32768)
//	allowedTools         raw tool names to register (omitted: all; empty: an error)
//	protocolVersion      "" (stdio: 2025-11-25; HTTP: negotiated), "auto", or a version
//	maxOutputBytes       cap of the model-facing text of one result (100000)
//
// For example, in a profile:
//
//	github:
//	  use: mcpclient
//	  config:
//	    serverName: github
//	    transport: stdio
//	    command: npx
//	    args: [-y, "@modelcontextprotocol/server-github"]
//	    env: {GITHUB_TOKEN: "${GITHUB_TOKEN}"}
//
// # Behaviour
//
// Transports (plugins/mcpclient/transport): a stdio server runs in its own process group with
// the environment inheritEnv admits (credential-shaped names scrubbed by default); its stderr
// goes to a bounded ring shown in errors and status, and closing terminates the whole group
// (gracefully, then by force). Streamable HTTP sends the headers on every request, has
// no client-wide timeout, and falls back to the legacy HTTP+SSE transport when the server
// rejects Streamable HTTP. The client advertises no capabilities (no roots).
//
// Authorization: every HTTP entry's requests go through a mcpauth authorizer (unless
// oauth.disabled or a static Authorization header): the stored OAuth token is sent and
// refreshed; a server that asks for a login puts the client in [PhaseNeedsAuth], which spends
// no reconnect budget and ends as soon as a login for the same server URL and client is
// stored in this process (`harness mcp login`, through the running host), or at the next
// re-check of the store (every 30 s) for one stored elsewhere. Tokens live in
// [CredentialsStore]; see docs/authorization.md.
//
// Tools: each tool is registered as mcp__<serverName>__<tool> ([PublicToolName]: sanitised,
// at most 64 characters, hashed when changed or cut) in one [toolregistry.Set] per client,
// with the server's description and input schema; the raw name is what goes on the wire.
// Discovery drains pagination, applies allowedTools, rejects a listing that names a tool
// twice, and registers nothing for a server without the tools capability. A
// tools/list_changed notification only signals: the supervisor re-lists after the burst
// settles (one listing in flight, one queued), swaps the set atomically, and keeps the
// previous set when a listing fails or is rejected.
//
// Calls: the registry validates the arguments against the schema and bounds the call with
// toolCallTimeoutMs; cancellation reaches the server as notifications/cancelled. Results go
// through the result adapter (adapter.go): canonical MCP JSON in Result.Raw, structured content validated
// against the tool's output schema, model content block by block (images as attachments,
// other rich content as explicit diagnostics), capped at maxOutputBytes. A result with
// isError is a tool error carrying the server's text.
//
// Lifecycle: activation waits for the first connection and discovery (bounded by
// startupTimeoutMs). When that fails, activation fails with failOnStartupError, and
// otherwise succeeds with no tools while retries continue in the background. A supervisor
// reconnects when the transport ends or a request finds the session gone (an HTTP server
// that restarted answers 404), with exponential backoff from reconnect.initialDelayMs
// doubling up to maxDelayMs, and a budget of maxAttempts consecutive retries that resets
// once a connection stayed up for maxDelayMs. When the budget is spent it unregisters the
// tools and reports failed. While it reconnects, calls fail at once with an error matching
// [ErrUnavailable] ("mcp server "x" is reconnecting (attempt n of m)"). The previous
// connection is always closed before a new one starts; if a stdio server's process group
// cannot be confirmed gone ([ErrCleanupIncomplete]) the supervisor stops for good rather
// than risk two server processes. Unloading the plugin during a connection attempt, a
// backoff or a call ends them and closes everything.
//
// Status: every phase change (connecting, connected, reconnecting n of m, failed, disposed)
// is reported with the error, the stderr tail, the tool names, the instruction size, the
// server's identity and the protocol version to the [StatusSink] mounted under
// [StatusSinkKey], when there is one, and emitted as [StatusEvent] for other observers.
//
// Server context: while the systemPrompt service is mounted, the server's instructions are
// the section mcp:<serverName>, headed "### MCP server: <serverName>", literal (never
// interpolated), capped at maxInstructionBytes, published after a successful discovery and
// replaced when a reconnect brings different ones. While the mcpResources service is
// mounted, the server's resources are registered as a provider for the shared resource
// tools. Both land in the client's registration scope and come and go with their services.
//
// [Probe] checks a configuration without a plugin: connect, list tools, close, with the
// stage reached, timings and an independent cleanup result.
//
// # Decisions
//
// Where this client differs from the reference harness (dsh-mcp-client), on purpose:
// instructions over maxInstructionBytes are cut with a marker instead of failing the
// connection; besides a closed transport, a request that finds the session gone
// (mcp.ErrSessionMissing, mcp.ErrConnectionClosed) triggers a reconnect, since a restarted
// HTTP server may never close the SDK's connection; tools/list_changed waits for a burst to
// settle (20 ms of quiet, at most 250 ms) before re-listing; a result the SDK cannot decode
// (a content type it does not know) is a tool error naming the problem, while blocks it
// decodes but this client does not project become diagnostics; every phase change is
// reported, disposal and list-change re-syncs that change the tools included. Requests in
// flight are cancelled when their connection closes, so closing never waits for them.
//
// # Concurrency
//
// Every exported function is safe for concurrent use. A plugin instance runs one supervisor
// goroutine; tool calls and resource requests run on their callers' goroutines and read the
// live connection with one atomic load.
package mcpclient
