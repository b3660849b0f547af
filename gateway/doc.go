// Package gateway serves the MCP servers, tools, resources and prompts of a scope tree as
// MCP servers of its own: one fleet of upstream connections (one per configured server),
// any number of downstream sessions.
//
// # Routes
//
// A [Gateway] has four kinds of route, each one mcp.Server that any number of downstream
// sessions share (the search route: one per session):
//
//   - the aggregated route ([Gateway.Aggregated], PathAggregated over HTTP): the tools visible
//     at the gateway's scope (the root) under their public names (mcp__<server>__<tool>),
//     executed through the tool registry's pipeline (policy, validation, timeouts,
//     recording); the resources and resource templates of the visible MCP servers under
//     their own URIs (the first server by name keeps a URI two servers list); their prompts as
//     mcp__<server>__<prompt>; completions and subscriptions routed to the owning server;
//   - the search route ([Gateway.Search], PathSearch): the aggregated route's tools behind
//     tool_search and call_tool, with a server per downstream session, to which the tools its
//     searches found are added with their real schemas (tools/list_changed);
//   - agent routes ([Gateway.Agent], PathAgents+<layer>): the same for one agent scope (its
//     masks, its own servers);
//   - per-server routes ([Gateway.Server], PathServers+<name>): one upstream server passed
//     through with its identity, instructions, capabilities and original names; tool calls
//     still go through the registry.
//
// Each route's server is kept in sync with the tree by a worker of its own, woken by the
// registry's Changed event, the MCP clients' status reports and the servers' own list-change
// notifications, so a backend change reaches every downstream session as list_changed.
// Cancellation, progress (with a gateway token per call, mapped back to the calling session),
// log messages (each session's logging/setLevel applies) and resource updates (to the
// subscribed sessions) are passed through.
//
// # Server requests
//
// A server's elicitation/create, sampling/createMessage and roots/list go to the downstream
// session whose call (tools/call, resources/read, prompts/get, completion/complete) caused
// them, never to another session: each forwarded request carries its session
// (mcpclient.WithOrigin) and the session's responder, sampler and roots. A session whose
// client lacks the capability, or a request that cannot be attributed (calls of two sessions
// in flight on one upstream connection), goes to the host's own responders. [New] offers
// elicitation and sampling in its scope's layer, so the upstream clients declare them; a
// client that connected before the gateway was made reconnects once to do so (a host that
// serves a gateway offers them before it mounts the fleet, and then none has to). A session on
// protocol 2026-07-28, which a server may not send requests to, is asked through input
// requests in its tool calls' results instead (SEP-2322): the call runs in the background
// between the rounds.
//
// # HTTP
//
// [Gateway.Handler] serves the routes over Streamable HTTP behind a Host check (DNS
// rebinding), an Origin check and a bearer token; [HTTPOptions.Check] refuses to serve without
// a token on an address that is not loopback.
//
// # Concurrency
//
// Every method of Gateway is safe for concurrent use. A Gateway is an effect of the context
// it was made with: its route workers ([ctx.Worker]) and its other goroutines (the reaper,
// session watchers, background calls, each a [ctx.Context.Go]) belong to that scope, and
// [Gateway.Close] or the scope's unload cancels the requests in flight, ends the downstream
// sessions and leaves no goroutine behind.
package gateway
