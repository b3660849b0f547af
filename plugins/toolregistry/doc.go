// Package toolregistry is the tools service of the harness: plugins register tools into a
// scoped registry, agents list the tools visible from their scope and execute them through
// one pipeline (validation, policy, timeout, recording).
//
// # Layers
//
// Registrations go into layers ([ctx.Context.Layer]): the root scope is the global layer,
// and a scope whose plugins are mounted on [ctx.Context.Layered] is a layer of its own (an
// agent scope). A registration is an effect of the context that made it (it goes away when
// that plugin unloads) and lands in that context's layer. So a plugin mounted at the top
// level, such as an MCP client, registers global tools whatever sub-scopes it registers
// from, and plugins mounted in an agent scope register tools of that agent only.
//
// From a scope S, the visible tools are those of the layers of S and its ancestors; when
// two layers hold the same name the nearest one wins, so an agent can shadow a global tool.
// Sibling agent scopes never see each other's tools. A name registered twice in one layer
// (say by two MCP clients mounted side by side) is an error naming both owners.
// [Registry.Restrict] hides inherited tools from one layer's subtree.
//
// # How a plugin registers a tool
//
// Inject the service, then register from the apply function; nothing needs undoing by hand:
//
//	var Plugin = ctx.Define(ctx.Meta{Name: "clock", Inject: []ctx.Dependency{toolregistry.Key}},
//		func(c *ctx.Context, _ struct{}) error {
//			_, err := toolregistry.Key.Use(c).Register(c, toolregistry.Tool{
//				Name:        "now",
//				Description: "Returns the current time.",
//				Execute: func(_ context.Context, _ *toolregistry.Call) (*toolregistry.Result, error) {
//					return toolregistry.TextResult(time.Now().Format(time.RFC3339)), nil
//				},
//			})
//			return err
//		})
//
// Mounted at the top level, such a plugin registers a global tool; mounted on an agent
// scope's [ctx.Context.Layered] context, a tool of that agent only. A plugin that owns a
// changing group of tools (the MCP client, one group per server) uses [Registry.NewSet]
// and swaps the whole group with [Set.Replace].
//
// # Execution
//
// [Registry.Execute] runs lookup → argument validation (JSON schema, compiled once at
// registration) → the [Policy] waterfall (allow, deny, or ask the [ApprovalKey] service) →
// the tool with the caller's context and its timeout → output validation → the
// [PostExecute] waterfall → the output cap → recording ([Registry.History]) and the
// [Executed] event. Every failure is a [*ToolError] with a stable [Code], and the returned
// [Result] then reports it to the model. Images travel as [Attachment] references into the
// [Attachments] store, never as base64 text.
//
// # Events
//
// [Changed] reports layer changes, coalesced: one [Set.Replace] is one event, and unloading
// a plugin is one event for the layer it registered into. Events are emitted with no registry lock held; the
// order of changes made concurrently is not defined, so listeners should re-read
// [Registry.List] rather than apply deltas. [Policy], [PostExecute] and [Executed] are
// dispatched from the caller's context, so listeners registered with [ctx.Subtree] see
// only their own subtree's calls.
//
// # Concurrency
//
// Every method of [Registry], [Set] and [Attachments] is safe for concurrent use. A tool
// runs on the goroutine that called Execute, with no registry lock held, so tools may
// execute other tools; listeners run synchronously on the goroutine that caused the event.
//
// # Configuration
//
// The [Plugin]'s configuration is [Config]: historySize, maxOutputBytes,
// attachmentMaxBytes and defaultTimeoutMs. An update is applied in place.
package toolregistry
