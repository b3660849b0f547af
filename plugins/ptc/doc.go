// Package ptc is PTC mode (programmatic tool calling): the model writes a short TypeScript
// program against the tools it can see, the harness runs it in a sandboxed interpreter, and
// only what the program returns and logs reaches the model's context.
//
// # Pieces
//
//   - [Declarations] renders the visible tools as TypeScript: one global tools object whose
//     quoted keys are the tools' names, argument types from the input schemas, result types
//     from the output schemas, doc comments from the descriptions; sorted, so the same tools
//     give the same bytes. [Catalog] is what the system prompt carries of them within a
//     budget: a line a tool while they fit, else the names by server, else the servers;
//     programs get the full declarations with describe(...names).
//   - [Runner.Run] runs one program: TypeScript types stripped by esbuild (with a source map,
//     so errors name the model's lines), then a fresh goja interpreter per run with nothing
//     but tools, console, sleep, atob/btoa, describe and ToolCallError beside the ECMAScript
//     built-ins.
//   - The bridge: every tools[name](args) goes through [toolregistry.Registry.Execute], with
//     the id "<run's call id>:code:<n>", so validation, policy and approvals, timeouts,
//     cancellation and recording are the registry's. Calls overlap (Promise.all) only when
//     the tool may overlap ([ReadOnly], or the agent's rule), up to MaxConcurrentCalls; any
//     other call waits for the calls before it and runs alone. A failed call rejects with a
//     ToolCallError (tool, code, message). Results are MCP's shape, {content,
//     structuredContent?, isError?}, binary content as base64 data.
//   - [Runner.Execute] is the run_code tool ([ToolName], [ToolParameters]): the agent offers
//     it to the model in PTC mode and runs it here; the registry reserves its name.
//   - [Plugin] provides the [Runner] under [Key] and a system prompt section
//     ([SectionName]) with the catalog of the tools visible from the assembling scope
//     ([Config].CatalogBytes), rendered when the assembly's Vars[ModeVar] is [ModePTC] and
//     cached until the registry changes.
//
// # Limits
//
// Each run has its own wall time, CPU time (time spent running the program's code, enforced
// with the interpreter's interrupt), output size (console plus return value; past it the
// run fails and the output captured up to the limit is returned, never cut silently),
// number of tool calls and memory. goja has no heap cap: every built-in whose allocation the
// program sizes asks a budget before it allocates (the limit minus the heap's growth since
// the run began), and so does every concatenation (compile rewrites +, += and template
// literals into calls of helpers that ask it; concat.go), the Go loops that drain iterators or call replacers stop at their next
// call once the run is stopped, a watcher samples the heap every 2 ms and stops the run once
// it grew by more than MaxMemoryBytes (garbage collected first), object spread is compiled to
// a loop of the program's own, and BigInt is not available. The bound is the process's heap,
// so concurrent runs and the host's own allocations count too; docs/ptc.md ("Memory") has
// every allocation path and the measured overshoot.
//
// # Concurrency
//
// A [Runner] is safe for concurrent use; each run owns its interpreter, which only the
// goroutine that called Run touches (call results and sleeps are handed to it through a
// queue). Run returns once every call the program started has returned.
package ptc
