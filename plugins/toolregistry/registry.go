package toolregistry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/cordisgo/harness/ctx"
)

// Registry is the tools service: scoped registrations, listings and the execution pipeline.
// Get it with [Key] from a plugin that injects it; the [Plugin] provides it.
//
// A Registry is safe for concurrent use. Lookup and execution take no lock shared between
// calls: the tool lookup reads an immutable copy ([ctx.Layers.Get]), and each call's ID,
// deadline and history record go to the lane of the processor it runs on (lanes.go), so
// concurrent calls scale with cores. Listings are cached per scope until the next change;
// registrations hold the write lock briefly. No lock is held while tools, listeners or the
// approver run.
type Registry struct {
	logger *slog.Logger
	opts   atomic.Pointer[Config]
	store  *Attachments
	lanes  *lanes // call IDs, deadlines and the history, per processor

	tools    *ctx.Layers[*entry] // the registered tools, by layer
	masks    *ctx.Layers[*mask]  // the Restrict masks, by layer, under unique names
	maskSeq  atomic.Uint64
	listings ctx.LayerCache[[]Info] // sorted listings by caller scope

	mu     sync.Mutex
	closed bool                // guarded by mu
	groups map[groupKey]*group // guarded by mu
	sets   map[*Set]struct{}   // guarded by mu: the open sets
}

// groupKey identifies the group of one activation in one layer.
type groupKey struct {
	layer *ctx.Scope
	act   *ctx.Context
}

// group gathers the registrations one activation of a scope made into one layer, so that
// unloading the scope produces one change event per layer instead of one per tool. Its
// flush is an effect registered on the activation's top level before the registrations it
// gathers, so it runs after them. Guarded by Registry.mu.
type group struct {
	key     groupKey
	flushed bool
	removed []string // unregistered while the activation was unloading; announced by flush
	masked  bool     // a mask was removed while the activation was unloading
}

// deferring reports whether changes in the group are left for its flush to announce.
func (g *group) deferring() bool { return g != nil && !g.flushed && g.key.act.Err() != nil }

// mask is one Restrict call.
type mask struct {
	allow, deny []string
	grp         *group
	src         *ctx.Context
	layer       *ctx.Scope
}

// hides reports whether the mask hides an inherited tool called name.
func (m *mask) hides(name string) bool {
	for _, p := range m.deny {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	if len(m.allow) == 0 {
		return false
	}
	for _, p := range m.allow {
		if ok, _ := path.Match(p, name); ok {
			return false
		}
	}
	return true
}

func newRegistry(logger *slog.Logger, o Config) *Registry {
	r := &Registry{
		logger: logger,
		tools:  ctx.NewLayers[*entry]("tool"),
		masks:  ctx.NewLayers[*mask]("tools:restrict"),
		groups: make(map[groupKey]*group),
		sets:   make(map[*Set]struct{}),
	}
	r.opts.Store(&o)
	r.store = newAttachments(o.AttachmentMaxBytes)
	r.lanes = newLanes(0, o.HistorySize)
	return r
}

// options returns the current configuration.
func (r *Registry) options() *Config { return r.opts.Load() }

// Change reports that the tools of one layer changed: tools were added, removed or
// replaced, or a mask was added or removed. The visible set may have changed for Scope and
// each of its descendants; use [Change.Affects] to filter, and [Registry.List] to read the
// new set. A Change is a plain value; its slices are shared by every listener and must not
// be modified.
//
// Changes are coalesced: one [Set.Replace] or [Set.Clear] is one change whatever the number
// of tools, and the unload of a plugin is one change for the layer it registered into.
// Changes are emitted after the registry's lock is released, from the registering context
// (a scope within the layer's subtree), so listeners may call back into the registry; the
// order of changes made concurrently by different goroutines is not defined.
type Change struct {
	// Scope is the scope whose layer changed.
	Scope *ctx.Scope
	// Owner is the registering owner (a scope name, or a set's owner).
	Owner string
	// Added, Removed and Updated list the tool names that changed in the layer, sorted.
	// Updated names were replaced by a [Set.Replace] with a different definition.
	Added, Removed, Updated []string
	// Restricted is set when a [Registry.Restrict] mask was added or removed.
	Restricted bool
}

// Affects reports whether the change may alter the tools visible from s.
func (ch Change) Affects(s *ctx.Scope) bool { return s != nil && s.Within(ch.Scope) }

func (ch Change) empty() bool {
	return len(ch.Added) == 0 && len(ch.Removed) == 0 && len(ch.Updated) == 0 && !ch.Restricted
}

// Changed is emitted when the tools of a layer change; see [Change].
var Changed = ctx.NewEvent[Change]("tools/changed")

func (r *Registry) notify(src *ctx.Context, ch Change) {
	if ch.empty() {
		return
	}
	slices.Sort(ch.Added)
	slices.Sort(ch.Removed)
	slices.Sort(ch.Updated)
	if err := Changed.Emit(src, ch); err != nil {
		r.logger.Warn("tools/changed listener failed", "err", err)
	}
}

// groupLocked returns the group of c's current activation in layer, installing its flush.
// It returns nil when the activation cannot take effects (changes are then announced one by
// one).
func (r *Registry) groupLocked(layer *ctx.Scope, c *ctx.Context) *group {
	act := c.Scope().Context()
	if act == nil {
		return nil
	}
	key := groupKey{layer: layer, act: act}
	if g := r.groups[key]; g != nil {
		return g
	}
	g := &group{key: key}
	// An effect holding the cleanup rather than act.Defer: a refused Defer runs its cleanup at
	// once, and flush needs r.mu, which the caller holds; a refused Effect runs nothing.
	if _, err := act.Effect("toolregistry:layer", func(e *ctx.Effect) error {
		e.Defer(func(context.Context) error {
			r.flush(g)
			return nil
		})
		return nil
	}); err != nil {
		return nil
	}
	r.groups[key] = g
	return g
}

// flush runs when an activation unloads: it drops whatever the activation still has
// registered in the layer and announces everything the unload removed as one change.
func (r *Registry) flush(g *group) {
	r.mu.Lock()
	g.flushed = true
	delete(r.groups, g.key)
	layer := g.key.layer
	ch := Change{Scope: layer, Owner: g.key.act.Scope().Name(), Removed: slices.Clone(g.removed), Restricted: g.masked}
	for s := range r.sets {
		if s.grp == g {
			s.closed = true
			s.tools = nil
			delete(r.sets, s)
		}
	}
	for _, e := range r.tools.RemoveFunc(layer, func(e ctx.Entry[*entry]) bool { return e.Value.grp == g }) {
		ch.Removed = append(ch.Removed, e.Name)
	}
	if len(r.masks.RemoveFunc(layer, func(m ctx.Entry[*mask]) bool { return m.Value.grp == g })) > 0 {
		ch.Restricted = true
	}
	r.mu.Unlock()
	r.notify(g.key.act, ch)
}

func duplicate(name string, s *ctx.Scope, existing, owner string) error {
	return fmt.Errorf("%w: tool %q is already registered in scope %q by %q; %q cannot register it in the same scope",
		ErrDuplicateTool, name, s.Name(), existing, owner)
}

// Register adds t to c's layer ([ctx.Context.Layer]), as an effect of c (the caller's context, not
// the registry's): the returned disposer, or the unload of c's scope, unregisters it. The
// tool is visible from the layer's scope and its descendants, where it shadows a tool of
// the same name from an enclosing layer. A name already registered in the same layer is an
// error wrapping [ErrDuplicateTool] that names both owners; an invalid definition is an
// error wrapping [ErrInvalidTool]. The owner shown in listings is c's scope name (the
// registering plugin).
func (r *Registry) Register(c *ctx.Context, t Tool) (ctx.Disposer, error) {
	s := c.Layer()
	e, err := compile(t, c.Scope().Name())
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, fmt.Errorf("register tool %q: %w", t.Name, ErrClosed)
	}
	e.grp, e.src, e.info.Scope = r.groupLocked(s, c), c, s
	r.mu.Unlock()
	d, err := r.tools.Add(c, t.Name, e, func() { r.unregistered(e) })
	if de := (*ctx.DuplicateError[*entry])(nil); errors.As(err, &de) {
		return nil, duplicate(t.Name, s, de.Existing.info.Owner, e.info.Owner)
	}
	if err != nil {
		return nil, fmt.Errorf("register tool %q: %w", t.Name, err)
	}
	r.notify(c, Change{Scope: s, Owner: e.info.Owner, Added: []string{t.Name}})
	return d, nil
}

// unregistered announces that e left its layer, or leaves that to its group's flush.
func (r *Registry) unregistered(e *entry) {
	r.mu.Lock()
	if e.grp.deferring() {
		e.grp.removed = append(e.grp.removed, e.info.Name)
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	r.notify(e.src, Change{Scope: e.info.Scope, Owner: e.info.Owner, Removed: []string{e.info.Name}})
}

// Set is a replaceable group of tools registered in one scope under one owner: the MCP
// client keeps one per server and swaps it whenever the server's tool list changes.
//
// A Set is safe for concurrent use; concurrent Replace calls are applied one at a time.
type Set struct {
	r       *Registry
	owner   string
	dispose ctx.Disposer
	layer   *ctx.Scope
	grp     *group
	src     *ctx.Context

	// guarded by r.mu
	tools  map[string]*entry
	closed bool
}

// NewSet creates an empty set of tools owned by owner (c's scope name when empty) in c's
// layer ([ctx.Context.Layer]), as an effect of c: disposing the set ([Set.Dispose]) or unloading c's
// scope removes its tools.
func (r *Registry) NewSet(c *ctx.Context, owner string) (*Set, error) {
	s := c.Layer()
	if owner == "" {
		owner = c.Scope().Name()
	}
	st := &Set{r: r, owner: owner, src: c, layer: s}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, fmt.Errorf("tool set %q: %w", owner, ErrClosed)
	}
	st.grp = r.groupLocked(s, c)
	// An effect rather than c.Defer, for the reason given in groupLocked (close needs r.mu).
	d, err := c.Effect("toolset:"+owner, func(e *ctx.Effect) error {
		e.Defer(func(context.Context) error {
			st.close()
			return nil
		})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tool set %q: %w", owner, err)
	}
	st.dispose = d
	r.sets[st] = struct{}{}
	return st, nil
}

// Owner returns the set's owner.
func (s *Set) Owner() string { return s.owner }

// Names returns the names of the set's tools, sorted.
func (s *Set) Names() []string {
	s.r.mu.Lock()
	names := slices.Sorted(maps.Keys(s.tools))
	s.r.mu.Unlock()
	return names
}

// Replace swaps the set's tools for tools, atomically: every definition is validated first,
// and a bad definition, a name listed twice or a name registered in the same scope by
// another owner fails the whole call and keeps the previous tools. A successful Replace that
// changes anything emits exactly one [Changed] event. After the set is disposed, Replace
// returns an error wrapping [ErrClosed].
func (s *Set) Replace(tools []Tool) error {
	next := make(map[string]*entry, len(tools))
	for _, t := range tools {
		e, err := compile(t, s.owner)
		if err != nil {
			return err
		}
		if next[t.Name] != nil {
			return fmt.Errorf("%w: tool %q is listed twice in the set of %q", ErrDuplicateTool, t.Name, s.owner)
		}
		next[t.Name] = e
	}
	r := s.r
	r.mu.Lock()
	if s.closed {
		r.mu.Unlock()
		return fmt.Errorf("tool set %q: %w", s.owner, ErrClosed)
	}
	for _, e := range next {
		e.set, e.grp, e.src, e.info.Scope = s, s.grp, s.src, s.layer
	}
	old, err := r.tools.Replace(s.layer, s, next)
	if de := (*ctx.DuplicateError[*entry])(nil); errors.As(err, &de) {
		r.mu.Unlock()
		return duplicate(de.Name, s.layer, de.Existing.info.Owner, s.owner)
	}
	ch := Change{Scope: s.layer, Owner: s.owner}
	for name := range old {
		if next[name] == nil {
			ch.Removed = append(ch.Removed, name)
		}
	}
	for name, e := range next {
		switch o := old[name]; {
		case o == nil:
			ch.Added = append(ch.Added, name)
		case !sameInfo(o.info, e.info) || o.timeout != e.timeout:
			ch.Updated = append(ch.Updated, name)
		}
	}
	s.tools = next
	r.mu.Unlock()
	r.notify(s.src, ch)
	return nil
}

// Clear removes every tool of the set and keeps it usable, emitting one [Changed] event if
// it had any.
func (s *Set) Clear() error { return s.Replace(nil) }

// Dispose removes the set's tools for good. It is idempotent; ctx bounds the wait for a
// disposal already in progress.
func (s *Set) Dispose(ccx context.Context) error { return s.dispose(ccx) }

// close runs when the set's effect is disposed.
func (s *Set) close() {
	r := s.r
	r.mu.Lock()
	if s.closed {
		r.mu.Unlock()
		return
	}
	s.closed = true
	delete(r.sets, s)
	ch := Change{Scope: s.layer, Owner: s.owner}
	old, _ := r.tools.Replace(s.layer, s, nil) // emptying cannot collide
	for name := range old {
		ch.Removed = append(ch.Removed, name)
	}
	s.tools = nil
	if s.grp.deferring() {
		s.grp.removed = append(s.grp.removed, ch.Removed...)
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	r.notify(s.src, ch)
}

func sameInfo(a, b Info) bool {
	return a.Name == b.Name && a.Description == b.Description && a.Owner == b.Owner &&
		string(a.Parameters) == string(b.Parameters) && string(a.OutputSchema) == string(b.OutputSchema) &&
		maps.Equal(a.Meta, b.Meta)
}

// Restrict adds a mask to c's layer ([ctx.Context.Layer]), as an effect of c, that hides inherited
// tools (those of enclosing layers) from the layer's scope and its descendants. Tools of the
// layer itself and of layers below it are never masked. With a non-empty allow, only inherited tools
// matching one of its patterns stay visible; an inherited tool matching a deny pattern is
// hidden. Patterns use [path.Match] syntax ('*', '?', character classes), so "mcp__gh__*"
// covers one MCP server and deny ["*"] hides every inherited tool. Several masks on one
// subtree all apply. Hidden tools are absent from [Registry.List] and calling them fails
// with [CodeUnknownTool]. Through a context whose layer is the root there is nothing to
// inherit, so such a mask hides nothing: restrict an agent scope ([ctx.Context.Layered]).
func (r *Registry) Restrict(c *ctx.Context, allow, deny []string) (ctx.Disposer, error) {
	for _, p := range slices.Concat(allow, deny) {
		if _, err := path.Match(p, ""); err != nil || p == "" {
			return nil, fmt.Errorf("%w: %q", ErrInvalidPattern, p)
		}
	}
	s := c.Layer()
	m := &mask{allow: slices.Clone(allow), deny: slices.Clone(deny), src: c, layer: s}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, fmt.Errorf("restrict: %w", ErrClosed)
	}
	m.grp = r.groupLocked(s, c)
	r.mu.Unlock()
	d, err := r.masks.Add(c, "mask-"+strconv.FormatUint(r.maskSeq.Add(1), 10), m, func() { r.unrestricted(m) })
	if err != nil {
		return nil, fmt.Errorf("restrict: %w", err)
	}
	r.notify(c, Change{Scope: s, Owner: c.Scope().Name(), Restricted: true})
	return d, nil
}

// unrestricted announces that m was removed, or leaves that to its group's flush.
func (r *Registry) unrestricted(m *mask) {
	r.mu.Lock()
	if m.grp.deferring() {
		m.grp.masked = true
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	r.notify(m.src, Change{Scope: m.layer, Owner: m.src.Scope().Name(), Restricted: true})
}

// resolve finds the tool called name as seen from s: the nearest layer wins ([ctx.Layers]),
// and a mask of a layer below the winner's hides it. hidden names the nearest masking layer.
func (r *Registry) resolve(s *ctx.Scope, name string) (e *entry, hidden *ctx.Scope) {
	found, ok := r.tools.Get(s, name)
	if !ok {
		return nil, nil
	}
	if r.masks.Len() == 0 {
		return found.Value, nil
	}
	if hidden = hider(r.masks.Visible(s), found); hidden != nil {
		return nil, hidden
	}
	return found.Value, nil
}

// hider returns the nearest layer of masks that hides t (a mask hides only what its layer
// inherits: the tools of enclosing layers), or nil.
func hider(masks []ctx.Entry[*mask], t ctx.Entry[*entry]) *ctx.Scope {
	var nearest *ctx.Scope
	for _, m := range masks {
		if m.Layer != t.Layer && m.Layer.Within(t.Layer) && m.Value.hides(t.Name) {
			if nearest == nil || m.Layer.Within(nearest) {
				nearest = m.Layer
			}
		}
	}
	return nearest
}

// Lookup returns the tool called name as visible from c's scope.
func (r *Registry) Lookup(c *ctx.Context, name string) (Info, bool) {
	e, _ := r.resolve(c.Scope(), name)
	if e == nil {
		return Info{}, false
	}
	return e.info, true
}

// List returns the tools visible from c's scope, sorted by name: the registrations of the
// layers of the scope and its ancestors, the nearest registration of a name winning, minus
// what masks ([Registry.Restrict]) hide. The slice is the caller's; the listing is cached
// per scope until the next change.
func (r *Registry) List(c *ctx.Context) []Info { return slices.Clone(r.listing(c.Scope())) }

// listing returns the cached listing of s, shared: callers must not modify it.
func (r *Registry) listing(s *ctx.Scope) []Info {
	version := r.tools.Version() + r.masks.Version()
	return r.listings.Get(s, version, func() []Info { return r.list(s) })
}

// visibleNames returns the names of the tools visible from c's scope.
func (r *Registry) visibleNames(c *ctx.Context) []string {
	infos := r.listing(c.Scope())
	names := make([]string, len(infos))
	for i, in := range infos {
		names[i] = in.Name
	}
	return names
}

func (r *Registry) list(s *ctx.Scope) []Info {
	var masks []ctx.Entry[*mask]
	if r.masks.Len() > 0 {
		masks = r.masks.Visible(s)
	}
	tools := r.tools.Visible(s)
	out := make([]Info, 0, len(tools))
	for _, t := range tools {
		if masks == nil || hider(masks, t) == nil {
			out = append(out, t.Value.info)
		}
	}
	return out
}

// close refuses new registrations once the registry's scope unloads.
func (r *Registry) close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
}
