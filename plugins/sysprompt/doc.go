// Package sysprompt is the systemPrompt service: it assembles the system prompt of a model turn
// from named, ordered sections that plugins register in the scope tree, and records which
// section, owned by which plugin, produced which bytes.
//
// Mount [Plugin] once (usually at the root). It provides the service under [Key]; plugins read it
// with Key.Use (when they inject it) or Key.Get (when the prompt is optional for them).
//
// # How a plugin adds a section
//
// A section is registered through the plugin's own context, so it lives exactly as long as the
// plugin's activation:
//
//	var Plugin = ctx.Define(ctx.Meta{Name: "greeter", Inject: []ctx.Dependency{sysprompt.Key}}, apply)
//
//	func apply(c *ctx.Context, _ struct{}) error {
//		_, err := sysprompt.Key.Use(c).Register(c, sysprompt.Section{
//			Name:        "greeter",
//			Order:       500,
//			Text:        "Greet {{user}} by name.",
//			Interpolate: true,
//		})
//		return err
//	}
//
// Register returns a disposer; the section is also removed when the plugin's scope unloads. A
// section whose text changes over time either uses Render (called at every assembly) or is
// registered with [Service.Set], whose [Handle] replaces the text in place with one change event.
//
// # Layers and visibility
//
// Sections live in layers. A layer is the root or an agent scope, marked with
// ctx.Context.Layered (the profile loader marks every row that holds nested rows). A
// registration goes into the layer of the context it is made through (ctx.Context.Layer): a
// plugin mounted at the top level contributes to every assembly, while a plugin mounted inside
// an agent scope contributes only to assemblies made from that agent scope or below it; sibling
// agent scopes never see each other's sections. The tool registry and the MCP resources service
// use the same layers, so tools and prompt sections always agree on visibility.
//
// A plugin that works with or without the prompt follows the service from a sub-scope mounted
// with ctx.Context.Inject, so that its sections come and go with the service; the sub-scope is
// in the same layer. Reading the service once with Key.Get is not reactive: if the sysprompt
// plugin restarts, such sections stay with the old service.
//
// [Service.Assemble] merges the layers from the caller's scope up to the root; when two layers
// hold a section of the same name, the nearer one wins. A name may be registered only once per
// layer: a second registration is an error naming both owners.
//
// # Rendering
//
// Sections are emitted by ascending Order, ties broken by Name in byte order, joined with the
// configured separator (a blank line by default). A section whose rendered text is empty or only
// white space is dropped, with no separator. With Interpolate set, {{name}} references are
// replaced by Assembly.Vars; a reference to a variable that is not set fails the assembly with
// an error naming the section, its owner and the variable. Spaces inside the braces are allowed
// ({{ name }}); variable names are 1 to 128 letters, digits, '_', '.' or '-'. In an interpolated
// section \{{ stands for a literal {{ and \\{{ for a backslash followed by a reference. Without
// Interpolate, text is emitted verbatim and braces never cause an error.
//
// Assemble is meant to run on every model turn: the merged, sorted view of the layers is cached
// per layer chain and rebuilt only after a registration or removal, and static sections cost a
// copy into the output.
//
// # Events
//
// [Changed] is emitted on every change: a section registered, removed, or its text replaced
// through a [Handle]. It is dispatched from the registering plugin's context; listeners that want
// every change should not use [ctx.Subtree].
package sysprompt
