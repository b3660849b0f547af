package ctx

// layerKey is the context value that marks a layer; its value is the layer's scope.
type layerKey struct{}

// Layered returns a context derived from c that makes c's scope a layer of its own — an
// agent scope. Services that keep scoped registrations (tools, prompt sections, resource
// providers) put whatever is registered through the returned context, through contexts
// derived from it and by every plugin mounted on it, at any depth, into this layer instead
// of the enclosing one. What a layer holds is visible from the layer's scope and its
// descendants only, and shadows what enclosing layers hold under the same name. Mount an
// agent's plugins on it:
//
//	agent := ctx.Layered()
//	_, err := agent.Plugin(mcpclient.Plugin, cfg)
func (c *Context) Layered() *Context { return c.With(layerKey{}, c.scope) }

// Layer returns the scope of the layer that registrations through c belong to: the scope of
// the nearest [Context.Layered] context c derives from (through derived contexts and plugin
// mounts), or the root scope. A plugin mounted at the top level therefore registers into
// the global layer, whatever sub-scopes it registers from, and a plugin mounted in an agent
// scope registers into that agent's layer.
func (c *Context) Layer() *Scope {
	if s, ok := c.Value(layerKey{}).(*Scope); ok {
		return s
	}
	return c.scope.r.scope
}
