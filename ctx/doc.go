// Package ctx is the scope tree that every harness plugin lives in: a Go port of the
// Cordis v4 plugin model.
//
// A tree of scopes starts at a root made by [New]. Plugins are values made once by
// [Define]; mounting one with [Context.Plugin] creates a child [Scope] that loads on its own
// goroutine and returns at once. Inside a scope, code holds resources only through effects
// ([Context.Effect], [Context.Defer], [Context.Go], and [Context.NewWorker] for a reconcile
// loop): when the scope unloads, every effect is undone in reverse order. Services are typed keys ([Key]) that a scope provides and that
// other scopes declare in their plugin's Inject list; a scope whose injected services are
// missing waits in [Pending] and loads as soon as they appear. Events ([Event], [Bail],
// [Chain]) carry their dispatch mode in their type. Registrations that are visible to one
// subtree — tools, prompt sections, resource providers — live in a [Layers]: a value added
// into the caller's layer ([Context.Layer], set by [Context.Layered]) is seen from that
// layer's scope and below, the nearest layer winning under one name.
//
// Plugins are written as
//
//	func apply(c *ctx.Context, cfg Config) error
//
// The API is method-centric: operations are methods on [*Context], on [Key] and on the
// event types. In a file that imports this package, ctx always names the package (never a
// parameter or variable), so package-level names such as ctx.Define and ctx.Prepend can be
// used anywhere; internal/archtest checks it.
//
// # Configuration
//
// A plugin's configuration is its type C, named Config by convention. [Decode] turns a raw
// value (maps from YAML or JSON, JSON bytes) into a C: the defaults of a [Defaulter], the
// keys decoded strictly (an unknown key, a key in the wrong case and a value of the wrong
// kind are problems naming the key path, all reported at once), then a [Validator]. Every
// configuration problem in the module is a [*ConfigError] (source, line, plugin, key
// path, message), several joined in order; [Problems] collects them in a Validate method and
// [PlaceConfigErrors] moves them into the document they came from. [Def.Config] and
// [OnConfigUpdate] read the configuration typed.
//
// # Concurrency
//
// Every exported method is safe for concurrent use. One lock per root guards the tree; it is
// never held while user code runs (apply functions, disposers, listeners, config hooks). Each
// scope has at most one state transition in flight; [Context.Settle] waits until no scope of
// the tree has one.
package ctx
