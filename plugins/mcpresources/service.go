package mcpresources

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/sysprompt"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// Key is the mcpResources service. It is optional for its users: the MCP client follows it
// from a sub-scope that injects it ([ctx.Context.Inject]) and registers one [Provider] per
// configured server whenever the service is available.
var Key = ctx.NewKey[*Service]("mcpResources")

// Plugin provides the mcpResources service ([Key]). It injects the tools service and has no
// configuration (its config type is struct{}). While the systemPrompt service is available it
// also maintains the resource-server section of the prompt (see the package documentation).
var Plugin = ctx.Define(ctx.Meta{Name: "mcpresources", Inject: []ctx.Dependency{toolregistry.Key}}, apply)

// ToolOwner is the owner the shared tools are registered under: listings show it in
// [toolregistry.Info.Owner], whichever provider caused the registration.
const ToolOwner = "mcpresources"

// MaxServerNameLen is the longest server name [Service.Register] accepts.
const MaxServerNameLen = 32

// Sentinel errors. Match them with [errors.Is].
var (
	// ErrInvalidServer: [Service.Register] got a server name outside ^[A-Za-z0-9_-]{1,32}$,
	// or a nil provider.
	ErrInvalidServer = errors.New("mcpresources: invalid server")
	// ErrDuplicateServer: the server name already has a provider in the caller's layer.
	ErrDuplicateServer = errors.New("mcpresources: duplicate server")
	// ErrUnknownServer: a resource tool named a server that has no provider visible from the
	// calling scope. The tool error of such a call wraps it.
	ErrUnknownServer = errors.New("mcpresources: unknown server")
	// ErrClosed: the service's scope unloaded; it accepts no more providers.
	ErrClosed = errors.New("mcpresources: service closed")
	// ErrNoSubscribe: [Service.Subscribe] named a server that cannot subscribe to resources
	// (it lacks the resources.subscribe capability, or its provider is no [Subscriber]).
	ErrNoSubscribe = errors.New("mcpresources: server does not support resource subscriptions")
)

// Service keeps the resource providers of every layer and the shared resource tools. Get it
// with [Key]; the [Plugin] provides it.
//
// A Service is safe for concurrent use. Tool executions, [Service.Servers] and prompt
// rendering take a read lock for a few map lookups per scope level and never wait for
// registrations; no lock is held while a provider runs. Registrations and removals (Register
// and the disposers it returns) are applied one at a time for the whole service, and they
// register or remove tools and prompt sections, whose change events are dispatched
// synchronously on the same goroutine: a listener of [toolregistry.Changed] or
// [sysprompt.Changed] must not call Register or a provider disposer directly (it would
// deadlock); it may start a goroutine or mount a plugin instead.
type Service struct {
	reg    *toolregistry.Registry
	logger *slog.Logger
	tools  []toolregistry.Tool // the three shared tools, built once

	// providers holds the registered providers, by layer: it decides which ones a
	// calling scope sees.
	providers *ctx.Layers[*entry]

	// op serialises every change to the layers: provider insertion and removal, tool sets,
	// prompt sections. It is held while the registry and the prompt service are called, and
	// taken before mu.
	op     sync.Mutex
	layers map[*ctx.Scope]*layer // guarded by op: the layers that have providers

	mu     sync.RWMutex
	prompt *sysprompt.Service // guarded by mu; written with op held too
	closed bool               // guarded by mu; written with op held too
}

// layer holds what the service keeps for one layer (an agent scope, or the root) while it
// has providers: the shared tools and the prompt section of that layer. Guarded by
// Service.op.
type layer struct {
	scope   *ctx.Scope // the layer's scope
	tools   *toolregistry.Set
	section ctx.Disposer
}

// entry is one registered provider. Immutable.
type entry struct {
	server string
	p      Provider
}

func newService(reg *toolregistry.Registry, logger *slog.Logger) *Service {
	s := &Service{reg: reg, logger: logger, layers: make(map[*ctx.Scope]*layer),
		providers: ctx.NewLayers[*entry]("mcpResources")}
	s.tools = s.sharedTools()
	return s
}

// promptDeps is what the prompt sub-scope injects.
var promptDeps = []ctx.Dependency{sysprompt.Key}

func apply(c *ctx.Context, _ struct{}) error {
	s := newService(toolregistry.Key.Use(c), c.Logger())
	if _, err := c.Defer("mcpresources:close", s.close); err != nil {
		return err
	}
	// The prompt is optional: this sub-scope loads whenever a systemPrompt service is
	// available (now or later, or a replacement) and unloads when it goes away.
	if _, err := c.Inject("mcpresources-prompt", promptDeps, s.bindPrompt); err != nil {
		return err
	}
	_, err := Key.Provide(c, s)
	return err
}

// validServerName reports whether name matches ^[A-Za-z0-9_-]{1,32}$: a tool name's
// charset, at most MaxServerNameLen long.
func validServerName(name string) bool {
	return len(name) <= MaxServerNameLen && toolregistry.ValidName(name)
}

// Register makes p the resource provider of the server called server in c's layer
// ([ctx.Context.Layer]: the agent scope c belongs to, or the root), as an effect of c (the
// caller's context, not the service's): the returned disposer, or the unload of c's scope,
// removes it. The disposer is idempotent.
//
// The provider is visible to tool calls made from the layer's scope and its descendants,
// where it shadows a provider of the same name from an enclosing layer; sibling agent scopes
// never see it. The name must match ^[A-Za-z0-9_-]{1,32}$ ([ErrInvalidServer]) and be
// unique in the layer ([ErrDuplicateServer], the error names it); other layers may reuse it.
//
// The first provider of a layer registers the three shared resource tools in that layer of
// the tools service. They are owned by the service ([ToolOwner]), not by the provider's
// plugin: they are an effect of the layer scope's activation, so a provider's plugin can
// unload without taking along tools that its siblings still need, and the service removes
// them when the layer's last provider goes. The three are registered all together or not at
// all: if the registry refuses them (another owner holds one of the names in that layer),
// Register fails with that error and the provider is not registered. While the systemPrompt
// service is available, the first provider of a layer also adds the layer's prompt section,
// which goes with the last.
//
// See [Service] for what listeners of the change events this emits may not do.
func (s *Service) Register(c *ctx.Context, server string, p Provider) (ctx.Disposer, error) {
	if !validServerName(server) {
		return nil, tagged(ErrInvalidServer, "MCP resource server name %q must be 1 to %d characters of A-Z, a-z, 0-9, '_' and '-'",
			server, MaxServerNameLen)
	}
	if p == nil {
		return nil, tagged(ErrInvalidServer, "MCP resource server %q has a nil provider", server)
	}
	if c.Err() != nil {
		return nil, fmt.Errorf("register MCP resource server %q in scope %q: %w", server, c.Scope().Name(), ctx.ErrInactive)
	}
	sc := c.Layer()

	s.op.Lock()
	defer s.op.Unlock()
	s.mu.RLock()
	closed := s.closed
	s.mu.RUnlock()
	if closed {
		return nil, tagged(ErrClosed, "register MCP resource server %q: the mcpResources service has unloaded", server)
	}
	l := s.layers[sc]
	fresh := l == nil
	if fresh {
		l = &layer{scope: sc}
		if err := s.installTools(l); err != nil {
			return nil, fmt.Errorf("register MCP resource server %q in layer %q: shared resource tools: %w", server, sc.Name(), err)
		}
		s.layers[sc] = l
	}
	dispose, err := s.providers.Add(c, server, &entry{server: server, p: p}, func() {
		s.op.Lock()
		defer s.op.Unlock()
		s.removedLocked(sc)
	})
	if err != nil {
		if fresh {
			delete(s.layers, sc)
			s.teardownLocked(l)
		}
		if errors.Is(err, ctx.ErrDuplicateName) {
			return nil, tagged(ErrDuplicateServer, "MCP resource server %q is already registered in this scope (layer %q)",
				server, sc.Name())
		}
		return nil, fmt.Errorf("register MCP resource server %q: %w", server, err)
	}
	s.addSectionLocked(l)
	return dispose, nil
}

// layerContext returns a context of the layer scope's current activation that registers
// into that layer: registrations through it are effects of the layer scope itself, not of
// any one provider's plugin, so they last while the layer's scope is loaded and the service
// decides when they go. Nil when the scope is not loaded.
func layerContext(l *layer) *ctx.Context {
	act := l.scope.Context()
	if act == nil {
		return nil
	}
	return act.Layered()
}

// installTools registers the shared tools in l's layer, as a tool set the service disposes
// when the layer's last provider leaves. The caller holds op.
func (s *Service) installTools(l *layer) error {
	lc := layerContext(l)
	if lc == nil {
		return fmt.Errorf("layer scope %q is not loaded: %w", l.scope.Name(), ctx.ErrInactive)
	}
	set, err := s.reg.NewSet(lc, ToolOwner)
	if err != nil {
		return err
	}
	if err := set.Replace(s.tools); err != nil {
		_ = set.Dispose(context.Background())
		return err
	}
	l.tools = set
	return nil
}

// removedLocked runs after a provider of layer sc was removed: when it was the last one,
// the layer's tools and section go too. The caller holds op.
func (s *Service) removedLocked(sc *ctx.Scope) {
	l := s.layers[sc]
	if l == nil || len(s.providers.In(sc)) > 0 {
		return
	}
	delete(s.layers, sc)
	s.teardownLocked(l)
}

// teardownLocked removes l's tools and section. The caller holds op.
func (s *Service) teardownLocked(l *layer) {
	// Disposers wait only for a disposal already running elsewhere (the layer scope's own
	// unload, which disposes these effects before the providers' plugins), which never
	// waits for op.
	waitcx := context.Background()
	if l.section != nil {
		if err := l.section(waitcx); err != nil {
			s.logger.Warn("removing the MCP resource prompt section failed", "layer", l.scope.Name(), "err", err)
		}
		l.section = nil
	}
	if l.tools != nil {
		if err := l.tools.Dispose(waitcx); err != nil {
			s.logger.Warn("removing the MCP resource tools failed", "layer", l.scope.Name(), "err", err)
		}
		l.tools = nil
	}
}

// close runs when the service's scope unloads: every layer loses its shared tools and
// section, and later registrations fail with ErrClosed. Providers' disposers, still
// attached to their scopes, then find nothing to remove.
func (s *Service) close(context.Context) error {
	s.op.Lock()
	defer s.op.Unlock()
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	layers := slices.Collect(maps.Values(s.layers))
	clear(s.layers)
	for _, l := range layers {
		s.teardownLocked(l)
	}
	return nil
}

// resolve returns the provider of server as seen from sc: the nearest layer at or above sc
// that has one wins.
func (s *Service) resolve(sc *ctx.Scope, server string) *entry {
	if s.isClosed() {
		return nil
	}
	if e, ok := s.providers.Get(sc, server); ok {
		return e.Value
	}
	return nil
}

func (s *Service) isClosed() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.closed
}

// Servers returns the names of the resource servers visible from c's scope, sorted: those
// registered in the layers of c's scope and its ancestors. This is the list the prompt section shows and
// the set of names the resource tools accept when called from c's scope.
func (s *Service) Servers(c *ctx.Context) []string {
	return s.servers(c.Scope())
}

func (s *Service) servers(sc *ctx.Scope) []string {
	if s.isClosed() {
		return nil
	}
	var names []string
	for _, e := range s.providers.Visible(sc) {
		names = append(names, e.Name)
	}
	return names
}

// Subscribe takes one reference to the subscription of uri on the server called server, as
// visible from c's scope (the nearest layer wins, as for the tools). Several subscribers of
// one URI of one server share one subscription on the wire: the first sends
// resources/subscribe, the last [Subscription.Close] sends resources/unsubscribe, and the
// MCP client subscribes again on each reconnect while references remain. Updates arrive as
// events in the scope tree (mcpclient.ResourceUpdatedEvent), whoever subscribed.
//
// Errors: a name no visible provider has wraps [ErrUnknownServer] and lists the visible
// servers; a server without the resources.subscribe capability (or a provider that is no
// [Subscriber]) wraps [ErrNoSubscribe] and names the server; otherwise the provider's error
// (a disconnected server, the server's refusal). ctx bounds the request.
func (s *Service) Subscribe(cx context.Context, c *ctx.Context, server, uri string) (Subscription, error) {
	e := s.resolve(c.Scope(), server)
	if e == nil {
		return nil, tagged(ErrUnknownServer, "no MCP resource server %q is visible from scope %q (visible: %q)",
			server, c.Scope().Name(), s.servers(c.Scope()))
	}
	sub, ok := e.p.(Subscriber)
	if !ok {
		return nil, tagged(ErrNoSubscribe, "MCP server %q does not support resource subscriptions", server)
	}
	return sub.Subscribe(cx, uri, CallerInfo{Scope: c.Scope().Name()})
}

// taggedError is an error with its own message that matches a sentinel with [errors.Is], so
// that messages read as one sentence rather than "sentinel: message".
type taggedError struct {
	msg      string
	sentinel error
}

func tagged(sentinel error, format string, args ...any) error {
	return &taggedError{msg: fmt.Sprintf(format, args...), sentinel: sentinel}
}

func (e *taggedError) Error() string { return e.msg }

// Unwrap returns the sentinel.
func (e *taggedError) Unwrap() error { return e.sentinel }
