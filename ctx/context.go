package ctx

import (
	"context"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// Options configures a new root. The zero value is ready to use.
type Options struct {
	// Logger receives framework and scope logs. Nil means [slog.Default].
	Logger *slog.Logger
	// Base supplies values (and tracing) to every context of the tree. Its cancellation does
	// not end the tree: only disposing the root does. Nil means [context.Background].
	Base context.Context
}

// Context is one activation of a scope, handed to a plugin's apply function. It implements
// [context.Context]: Done closes when the activation unloads (each restart gets a fresh
// Context), and [context.Cause] then reports [ErrScopeUnloaded]. Contexts derived with
// [Context.With], [Context.Isolate] and [Context.Intercept] share the activation.
//
// A Context is immutable and safe for concurrent use.
type Context struct {
	std   context.Context
	scope *Scope
	act   *activation // nil: the root scope's current activation
	node  *node       // effect that nests registrations; nil: the activation's top level
	iso   *isoLayer
	icp   *icpLayer
}

// root is the shared state of one tree. mu guards every field marked "guarded" in this
// package, and is never held while user code runs.
type root struct {
	mu         sync.RWMutex
	nextID     uint64
	logger     *slog.Logger
	services   map[serviceKey]*impl
	dependents map[string]map[*Scope]struct{}
	listeners  atomic.Pointer[listenerTable] // written under mu, read without it (event.go)
	runtimes   map[PluginDef]map[*Scope]struct{}
	labels     map[string]*realm
	remotes    map[string]*RemoteMethod
	layered    sync.Map // *TreeLayers[T] → *Layers[T], see layered.go
	inflight   int
	idle       chan struct{} // closed while inflight == 0
	scope      *Scope
	unwindCtx  context.Context
	waits      map[*Scope][]*waitEdge // teardowns waiting for one another (wait.go)
}

// New creates the root of a scope tree. The root scope is [Active] at once; dispose it with
// Scope().Dispose to unload everything.
func New(opts Options) *Context {
	bcx := opts.Base
	if bcx == nil {
		bcx = context.Background()
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	r := &root{
		logger:     logger,
		services:   make(map[serviceKey]*impl),
		dependents: make(map[string]map[*Scope]struct{}),
		runtimes:   make(map[PluginDef]map[*Scope]struct{}),
		labels:     make(map[string]*realm),
		idle:       make(chan struct{}),
		unwindCtx:  context.WithoutCancel(bcx),
	}
	close(r.idle)
	stdcx, cancel := context.WithCancelCause(context.WithoutCancel(bcx))
	s := &Scope{r: r, state: Active, done: make(chan struct{}), name: "root", logger: logger}
	s.initEngine()
	r.scope = s
	c := &Context{std: stdcx, scope: s}
	s.mountCtx = c
	s.rootCancel = cancel
	s.cur = newActivation(s, c)
	s.loaded = s.epochLocked()
	return c
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Deadline implements [context.Context].
func (c *Context) Deadline() (time.Time, bool) { return c.std.Deadline() }

// Done implements [context.Context]: it closes when this activation starts unloading.
func (c *Context) Done() <-chan struct{} { return c.std.Done() }

// Err implements [context.Context].
func (c *Context) Err() error { return c.std.Err() }

// Value implements [context.Context]: values set with [Context.With] first, then the root's
// base context.
func (c *Context) Value(key any) any { return c.std.Value(key) }

// Scope returns the scope this context belongs to.
func (c *Context) Scope() *Scope { return c.scope }

// Root returns the root context of the tree.
func (c *Context) Root() *Context { return c.scope.r.scope.mountCtx }

// Logger returns the logger of this context's scope, carrying a "scope" attribute.
func (c *Context) Logger() *slog.Logger { return c.scope.logger }

// With returns a derived context carrying key → val, like [context.WithValue]. Plugins
// mounted on the derived context see the value too.
func (c *Context) With(key, val any) *Context {
	d := *c
	d.std = context.WithValue(c.std, key, val)
	return &d
}

// activationLocked returns the activation that registrations through c go into, or nil.
// Callers hold r.mu.
func (c *Context) activationLocked() *activation {
	if c.act != nil {
		return c.act
	}
	if c.scope.parent == nil {
		return c.scope.cur
	}
	return nil
}

// activation is one load of a scope: its Context, top-level effects and the snapshot of
// injected services. Fields are guarded by root.mu.
type activation struct {
	scope   *Scope
	ctx     *Context
	cancel  context.CancelCauseFunc
	top     *node
	store   map[string]*impl
	hooks   []*updateHook
	closing bool // unloading: new registrations are refused
	ended   bool // unloaded: services can no longer be used through ctx
}

func newActivation(s *Scope, c *Context) *activation {
	a := &activation{scope: s, ctx: c, top: &node{label: s.name, r: s.r}}
	a.top.done = make(chan struct{})
	return a
}

// Safely calls fn and returns its error, or a panic in fn as a [*PanicError] with the value
// and the stack: the way to run code of another plugin (a listener, a responder, a tool) so
// that its bug fails the one call instead of the process. It may be called from any
// goroutine.
func Safely(fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return fn()
}
