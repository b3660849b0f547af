// Package agent is the agent of the harness: a model (the model service) working with the
// tools of its scope (the tool registry) in a loop, with permissions on the registry's
// policy chain, append-only session logs, subagents made from agent scopes, and MCP
// sampling answered by the agent's model.
//
// # Mounting
//
// Mount [Plugin] at the top level of a profile: it is the main agent and provides the
// [Service] under [Key]. Mounted as the own plugin of an agent scope's row (a row with
// nested rows), it makes that scope a subagent of the nearest enclosing agent:
//
//	plugins:
//	  agent:
//	    use: agent
//	    config: {maxSteps: 30}
//	  reviewer:
//	    use: agent                     # this agent scope is a subagent
//	    config:
//	      description: Reviews a change and lists the problems it finds.
//	      tools: {allow: ["mcp__demo__*"]}
//	    plugins: {}
//
// The parent gets a tool per subagent (agent__reviewer) whose call runs the subagent's own
// loop — its tools, prompt, model and step limit — and returns its final answer. A
// subagent that only narrows its parent's tools ([Config].Tools) uses the parent's MCP
// clients: no server process is started for it.
//
// # Sessions and turns
//
// [Service.Start] opens a [Session]; [Session.Send] runs one turn: the user's message,
// then model requests — the system prompt assembled at the agent's scope, the tools
// visible there (chosen by the [Tools] chain; by default every visible tool, sorted by
// name, each schema's bytes as registered, so the request prefix is byte-stable), the
// history — and the tool calls of each answer executed through
// [toolregistry.Registry.Execute], until the model answers without calling tools, the step
// limit or the token budget is reached, or the turn is cancelled.
//
// Calls of one answer overlap only when each is safe to run alongside others (annotated
// read-only, or matching the agent's parallelSafe patterns), up to maxParallel; any
// other call waits for the calls before it and runs alone. Results are appended in the
// model's order. A cancelled turn lets started calls finish with their outcome and gives
// calls not started an aborted result, so the history stays valid for the provider.
//
// Surfaces drive a session through its API: [Session.Subscribe] streams [session.Event]s (the
// durable ones replayed from any sequence number), [Session.Approve] answers the
// approvals an interactive session asks, [Session.Cancel] stops the turn.
//
// # Logs
//
// A stored session writes one JSON event per line to events.jsonl in its directory of the
// [session.Store] (by default under [session.DefaultDir]). [Service.Resume] rebuilds the history
// from it: a torn last line is dropped and calls left open get aborted results.
//
// # Compaction
//
// Before a request whose estimated prompt passes [CompactionConfig].Threshold of the
// model's window, and when the provider refuses one as too long ([model.ErrContextTooLong]),
// the history is compacted: old long tool results pruned to pointers, the older messages
// summarised by the model in a request that re-sends the conversation's prefix (cache
// hits). The compaction is a durable event ([session.Compaction]); the raw events stay, and
// a resumed session loads the compacted view. [Session.Compact] compacts on demand.
// Secret-looking argument values are masked in the log.
//
// # Concurrency
//
// The Service, Sessions and Subscriptions are safe for concurrent use; see each type.
package agent
