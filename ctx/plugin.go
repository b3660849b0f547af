package ctx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
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
// Configuration is decoded strictly: a raw value (a map from YAML or JSON, JSON bytes) is
// decoded as JSON into C, and an unknown key is an error naming it. If *C has a method
// Default(), it is called on the zero value first, so decoded keys override defaults. If C
// or *C has a method Validate() error, it runs after decoding, at every activation and
// synchronously in [Scope.Update]. A value of type C or *C is used as is (still
// validated).
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
	if p, ok := any(cfg).(interface{ Default() }); ok {
		p.Default()
	}
	return cfg
}

func (d *Def[C]) apply(c *Context, cfg any) error { return d.fn(c, cfg.(C)) }

func (d *Def[C]) decode(raw any) (any, error) {
	var cfg C
	if p, ok := any(&cfg).(interface{ Default() }); ok {
		p.Default()
	}
	switch v := raw.(type) {
	case nil:
	case C:
		cfg = v
	case *C:
		if v != nil {
			cfg = *v
		}
	case json.RawMessage:
		if err := d.decodeJSON(v, &cfg); err != nil {
			return nil, err
		}
	case []byte:
		if err := d.decodeJSON(v, &cfg); err != nil {
			return nil, err
		}
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, &ConfigError{Plugin: d.meta.Name, Msg: "not a JSON-compatible value", Err: err}
		}
		if err := d.decodeJSON(b, &cfg); err != nil {
			return nil, err
		}
	}
	var verr error
	switch v := any(&cfg).(type) {
	case interface{ Validate() error }:
		verr = v.Validate()
	default:
		if v, ok := any(cfg).(interface{ Validate() error }); ok {
			verr = v.Validate()
		}
	}
	if verr != nil {
		var ce *ConfigError
		if errors.As(verr, &ce) && ce.Key != "" {
			// Validate named the key itself: keep its message and fill in the plugin.
			named := *ce
			named.Plugin = d.meta.Name
			return nil, &named
		}
		return nil, &ConfigError{Plugin: d.meta.Name, Err: verr}
	}
	return cfg, nil
}

func (d *Def[C]) decodeJSON(b []byte, cfg *C) error {
	if len(bytes.TrimSpace(b)) == 0 || bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		return nil
	}
	if kerr := checkKeyCase(b, reflect.TypeOf(cfg).Elem()); kerr != nil {
		return &ConfigError{Plugin: d.meta.Name, Key: kerr.key, Msg: kerr.msg}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	err := dec.Decode(cfg)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		key := te.Field
		if key == "" {
			key = "(root)"
		}
		return &ConfigError{Plugin: d.meta.Name, Key: key, Msg: fmt.Sprintf("expected %s, got %s", typeWord(te.Type.String()), te.Value), Err: err}
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return &ConfigError{Plugin: d.meta.Name, Key: strings.Trim(name, `"`), Msg: "unknown key", Err: err}
	}
	return &ConfigError{Plugin: d.meta.Name, Msg: err.Error(), Err: err}
}

// typeWord turns a Go type into the word a configuration author expects.
func typeWord(t string) string {
	switch {
	case t == "string":
		return "a string"
	case t == "bool":
		return "a boolean"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["):
		return "a map"
	case strings.HasPrefix(t, "time.Duration"):
		return "a duration"
	default:
		return "an object (" + t + ")"
	}
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
		idle:     closedChan,
	}
	s.name = def.Name()
	if s.name == "" {
		s.name = c.scope.name
	}
	for _, d := range def.Deps() {
		s.deps = append(s.deps, serviceKey{name: d.Name(), realm: c.realm(d.Name())})
	}
	r.mu.Lock()
	n, err := c.attachLocked("plugin:"+s.name, s.Dispose)
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
	if len(r.listeners[ScopeCreated.d]) > 0 {
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

type keyError struct{ key, msg string }

// checkKeyCase reports a key that encoding/json would accept only by ignoring case: config
// keys are exact, so "historysize" is an unknown key, not historySize.
func checkKeyCase(b []byte, t reflect.Type) *keyError {
	var raw any
	if json.Unmarshal(b, &raw) != nil {
		return nil // the decoder reports syntax errors
	}
	return walkKeys(raw, t, "")
}

func walkKeys(raw any, t reflect.Type, path string) *keyError {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := raw.(map[string]any)
		if !ok {
			return nil
		}
		fields := jsonFields(t)
		for k, v := range m {
			ft, exact := fields[k]
			if !exact {
				for name := range fields {
					if strings.EqualFold(name, k) {
						return &keyError{key: path + k, msg: fmt.Sprintf("unknown key (did you mean %q?)", name)}
					}
				}
				continue // unknown keys are reported by the decoder
			}
			if err := walkKeys(v, ft, path+k+"."); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if list, ok := raw.([]any); ok {
			for i, v := range list {
				if err := walkKeys(v, t.Elem(), fmt.Sprintf("%s%d.", path, i)); err != nil {
					return err
				}
			}
		}
	case reflect.Map:
		if m, ok := raw.(map[string]any); ok {
			for k, v := range m {
				if err := walkKeys(v, t.Elem(), path+k+"."); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// jsonFields maps the JSON names of t's fields (embedded structs flattened) to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := make(map[string]reflect.Type, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					out[k] = v
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}
