package ctx

import (
	"context"
	"fmt"
)

// Dependency is a service a plugin injects; [Key] implements it.
type Dependency interface {
	// Name returns the service name.
	Name() string
}

// Meta describes a plugin.
type Meta struct {
	// Name names the plugin in logs, errors and the registry.
	Name string
	// Inject lists the services the plugin needs: the scope stays [Pending] until all of
	// them are provided, unloads when one disappears and restarts when a provider changes.
	// Only injected services (and services provided by the root) can be read with
	// [Key.Use].
	Inject []Dependency
}

// PluginDef is a plugin definition made by [Define]. Its pointer identity is the plugin's
// identity in the registry.
type PluginDef interface {
	// Name returns the plugin's name.
	Name() string
	// Deps returns the injected services.
	Deps() []Dependency
	// DecodeConfig decodes and validates a raw configuration the way a mount would.
	DecodeConfig(raw any) (any, error)
	// NewConfig returns a pointer to a new configuration value with its defaults applied
	// and no validation, for documentation and tooling.
	NewConfig() any

	decode(raw any) (any, error)
	apply(c *Context, cfg any) error
}

// Def is a plugin definition with configuration type C. Make one with [Define] and keep it
// in a package-level variable; mount it with [Context.Plugin].
//
// Configuration is decoded by [Decode]: C's defaults ([Defaulter] on *C), the raw keys
// decoded strictly (an unknown key, a key in the wrong case, a value of the wrong kind are
// problems naming the key path), then C's [Validator], at every activation and
// synchronously in [Scope.Update]. A value of type C or *C is used as is (still
// validated). Problems are [*ConfigError] values with Plugin set to the plugin's name.
//
// Read the configuration typed with [Def.Config] and take updates in place with
// [OnConfigUpdate].
type Def[C any] struct {
	meta Meta
	fn   func(*Context, C) error
}

// Define makes a plugin definition. apply runs on its own goroutine each time the scope
// loads; returning an error (or panicking) makes the scope [Failed] after undoing whatever
// apply registered. apply may block (the scope stays [Loading]); it should watch
// ctx.Done(), which closes when the scope is disposed or restarted.
func Define[C any](meta Meta, apply func(ctx *Context, cfg C) error) *Def[C] {
	if apply == nil {
		panic("ctx.Define: nil apply function")
	}
	return &Def[C]{meta: meta, fn: apply}
}

// Name returns the plugin's name.
func (d *Def[C]) Name() string { return d.meta.Name }

// Deps returns the injected services.
func (d *Def[C]) Deps() []Dependency { return d.meta.Inject }

// DecodeConfig decodes and validates raw as this plugin's configuration.
func (d *Def[C]) DecodeConfig(raw any) (any, error) { return d.decode(raw) }

// NewConfig returns a *C with its defaults applied.
func (d *Def[C]) NewConfig() any {
	cfg := new(C)
	if p, ok := any(cfg).(Defaulter); ok {
		p.Default()
	}
	return cfg
}

func (d *Def[C]) apply(c *Context, cfg any) error { return d.fn(c, cfg.(C)) }

func (d *Def[C]) decode(raw any) (any, error) {
	cfg, err := Decode[C](raw)
	if err != nil {
		return nil, PlaceConfigErrors(err, "", "", d.meta.Name, "", nil)
	}
	return cfg, nil
}

// OnConfigUpdate registers an update hook like [Context.OnUpdate], typed: fn receives the
// new configuration as the plugin's configuration type C. It returns an error when c is
// not a context of a plugin whose configuration type is C. (A function rather than a
// method of [Def]: an apply function that named its own package-level definition would make
// an initialization cycle.)
func OnConfigUpdate[C any](c *Context, fn func(cfg C) bool) error {
	if def := c.scope.def; def == nil {
		return fmt.Errorf("update hook: %w", ErrRootOnly)
	} else if _, ok := def.NewConfig().(*C); !ok {
		var zero C
		return fmt.Errorf("update hook for %T: plugin %q has another configuration type (%T)", zero, def.Name(), def.NewConfig())
	}
	return c.OnUpdate(func(cfg any) bool {
		v, ok := cfg.(C)
		return ok && fn(v)
	})
}

// Config returns the decoded configuration of s's current (or last) load, and false when s
// is not a scope of d or has not decoded a configuration yet.
func (d *Def[C]) Config(s *Scope) (C, bool) {
	var zero C
	if s == nil || s.def != PluginDef(d) {
		return zero, false
	}
	v, ok := s.Config().(C)
	if !ok {
		return zero, false
	}
	return v, true
}

// Plugin mounts def as a child scope of c with the given raw configuration and returns at
// once: the scope loads on its own goroutine as soon as its injected services are
// available. The child is an effect of c: it is disposed when c's scope unloads. Use
// [Scope.Wait] to wait for the load.
func (c *Context) Plugin(def PluginDef, config any) (*Scope, error) {
	if def == nil {
		return nil, ErrInvalidPlugin
	}
	r := c.scope.r
	s := &Scope{
		r:        r,
		parent:   c.scope,
		def:      def,
		mountCtx: c,
		raw:      config,
		done:     make(chan struct{}),
	}
	s.initEngine()
	s.name = def.Name()
	if s.name == "" {
		s.name = c.scope.name
	}
	for _, d := range def.Deps() {
		s.deps = append(s.deps, serviceKey{name: d.Name(), realm: c.realm(d.Name())})
	}
	r.mu.Lock()
	n, err := c.attachLocked("plugin:"+s.name, func(cx context.Context) error { return s.dispose(cx, s.parent) })
	if err != nil {
		r.mu.Unlock()
		return nil, err
	}
	r.nextID++
	s.id = r.nextID
	s.logger = r.logger.With("scope", s.name, "scope_id", s.id)
	s.entry = n
	for _, k := range s.deps {
		set := r.dependents[k.name]
		if set == nil {
			set = make(map[*Scope]struct{})
			r.dependents[k.name] = set
		}
		set[s] = struct{}{}
	}
	set := r.runtimes[def]
	if set == nil {
		set = make(map[*Scope]struct{})
		r.runtimes[def] = set
	}
	set[s] = struct{}{}
	if len(r.snapshot(ScopeCreated.d)) > 0 {
		r.mu.Unlock()
		ScopeCreated.emitInternal(r, s)
		r.mu.Lock()
	}
	s.kickLocked()
	r.mu.Unlock()
	return s, nil
}

// Inject runs fn as an anonymous sub-plugin of c that loads only while every service in
// deps is available (≈ Cordis ctx.inject). fn's context may use those services.
func (c *Context) Inject(name string, deps []Dependency, fn func(ctx *Context) error) (*Scope, error) {
	def := Define(Meta{Name: name, Inject: deps}, func(ctx *Context, _ struct{}) error { return fn(ctx) })
	return c.Plugin(def, nil)
}

// Registry reports the plugins mounted in a tree.
//
// A Registry is safe for concurrent use.
type Registry struct{ r *root }

// Registry returns the tree's plugin registry.
func (c *Context) Registry() Registry { return Registry{c.scope.r} }

// Len returns the number of plugin definitions with at least one live scope.
func (g Registry) Len() int {
	g.r.mu.RLock()
	defer g.r.mu.RUnlock()
	return len(g.r.runtimes)
}

// Scopes returns the live scopes of def, in mount order.
func (g Registry) Scopes(def PluginDef) []*Scope {
	g.r.mu.RLock()
	out := make([]*Scope, 0, len(g.r.runtimes[def]))
	for s := range g.r.runtimes[def] {
		out = append(out, s)
	}
	g.r.mu.RUnlock()
	sortScopes(out)
	return out
}
