package toolregistry

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cordisgo/harness/ctx"
)

// Registry is the tools service: scoped registrations, listings and the execution pipeline.
// Get it with [Key] from a plugin that injects it; the [Plugin] provides it.
//
// A Registry is safe for concurrent use. Lookup and execution take a read lock for one map
// lookup per scope level; listings are cached per scope until the next change; registrations
// hold the write lock briefly. No lock is held while tools, listeners or the approver run.
type Registry struct {
	logger *slog.Logger
	opts   atomic.Pointer[Config]
	store  *Attachments
	hist   history
	seq    atomic.Uint64
	timers deadlines

	mu      sync.RWMutex
	layers  map[*ctx.Scope]*layer // guarded by mu
	closed  bool                  // guarded by mu
	version uint64                // guarded by mu; counts changes, stamps cached listings

	cacheMu      sync.Mutex
	cacheVersion uint64
	cache        map[*ctx.Scope][]Info // sorted listings by caller scope, valid for cacheVersion
}

// layer holds what was registered into one layer scope. Guarded by Registry.mu.
type layer struct {
	scope  *ctx.Scope
	tools  map[string]*entry
	masks  []*mask
	sets   map[*Set]struct{}
	groups map[*ctx.Context]*group // by activation context
}

// group gathers the registrations one activation of a scope made, so that unloading the
// scope produces one change event per layer instead of one per tool. Its flush is an effect
// registered on the activation's top level before the registrations it gathers, so it runs
// after them. Guarded by Registry.mu.
type group struct {
	act     *ctx.Context
	layer   *layer
	flushed bool
	removed []string // unregistered while the activation was unloading; announced by flush
	masked  bool     // a mask was removed while the activation was unloading
}

// deferring reports whether changes in the group are left for its flush to announce.
func (g *group) deferring() bool { return g != nil && !g.flushed && g.act.Err() != nil }

// mask is one Restrict call.
type mask struct {
	allow, deny []string
	grp         *group
	src         *ctx.Context
	layer       *layer
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
	r := &Registry{logger: logger, layers: make(map[*ctx.Scope]*layer)}
	r.opts.Store(&o)
	r.store = newAttachments(o.AttachmentMaxBytes)
	r.hist.resize(o.HistorySize)
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

// layerLocked returns s's layer, creating it.
func (r *Registry) layerLocked(s *ctx.Scope) *layer {
	l := r.layers[s]
	if l == nil {
		l = &layer{
			scope:  s,
			tools:  make(map[string]*entry),
			sets:   make(map[*Set]struct{}),
			groups: make(map[*ctx.Context]*group),
		}
		r.layers[s] = l
	}
	return l
}

// pruneLocked forgets l once nothing refers to it.
func (r *Registry) pruneLocked(l *layer) {
	if len(l.tools) == 0 && len(l.masks) == 0 && len(l.sets) == 0 && len(l.groups) == 0 && r.layers[l.scope] == l {
		delete(r.layers, l.scope)
	}
}

// groupLocked returns the group of c's current activation in l, installing its flush. It
// returns nil when the activation cannot take effects (changes are then announced one by
// one).
func (r *Registry) groupLocked(l *layer, c *ctx.Context) *group {
	act := c.Scope().Context()
	if act == nil {
		return nil
	}
	if g := l.groups[act]; g != nil {
		return g
	}
	g := &group{act: act, layer: l}
	if _, err := act.Defer("toolregistry:layer", func(context.Context) error {
		r.flush(g)
		return nil
	}); err != nil {
		return nil
	}
	l.groups[act] = g
	return g
}

// flush runs when an activation unloads: it drops whatever the activation still has
// registered in the layer and announces everything the unload removed as one change.
func (r *Registry) flush(g *group) {
	r.mu.Lock()
	l := g.layer
	g.flushed = true
	delete(l.groups, g.act)
	ch := Change{Scope: l.scope, Owner: g.act.Scope().Name(), Removed: g.removed, Restricted: g.masked}
	for name, e := range l.tools {
		if e.grp == g {
			delete(l.tools, name)
			ch.Removed = append(ch.Removed, name)
		}
	}
	for s := range l.sets {
		if s.grp == g {
			s.closed = true
			s.tools = nil
			delete(l.sets, s)
		}
	}
	if n := len(l.masks); n > 0 {
		l.masks = slices.DeleteFunc(l.masks, func(m *mask) bool { return m.grp == g })
		ch.Restricted = ch.Restricted || len(l.masks) != n
	}
	r.version++
	r.pruneLocked(l)
	r.mu.Unlock()
	r.notify(g.act, ch)
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
	l := r.layerLocked(s)
	if prev := l.tools[t.Name]; prev != nil {
		r.mu.Unlock()
		return nil, duplicate(t.Name, s, prev.info.Owner, e.info.Owner)
	}
	e.layer, e.grp, e.src, e.info.Scope = l, r.groupLocked(l, c), c, s
	d, err := c.Defer("tool:"+t.Name, func(context.Context) error {
		r.unregister(e)
		return nil
	})
	if err != nil {
		r.pruneLocked(l)
		r.mu.Unlock()
		return nil, fmt.Errorf("register tool %q: %w", t.Name, err)
	}
	l.tools[t.Name] = e
	r.version++
	r.mu.Unlock()
	r.notify(c, Change{Scope: s, Owner: e.info.Owner, Added: []string{t.Name}})
	return d, nil
}

func (r *Registry) unregister(e *entry) {
	r.mu.Lock()
	l, name := e.layer, e.info.Name
	if l.tools[name] != e {
		r.mu.Unlock()
		return
	}
	delete(l.tools, name)
	r.version++
	if e.grp.deferring() {
		e.grp.removed = append(e.grp.removed, name)
		r.mu.Unlock()
		return
	}
	r.pruneLocked(l)
	r.mu.Unlock()
	r.notify(e.src, Change{Scope: l.scope, Owner: e.info.Owner, Removed: []string{name}})
}

// Set is a replaceable group of tools registered in one scope under one owner: the MCP
// client keeps one per server and swaps it whenever the server's tool list changes.
//
// A Set is safe for concurrent use; concurrent Replace calls are applied one at a time.
type Set struct {
	r       *Registry
	owner   string
	dispose ctx.Disposer

	// guarded by r.mu
	layer  *layer
	grp    *group
	src    *ctx.Context
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
	st := &Set{r: r, owner: owner, src: c}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, fmt.Errorf("tool set %q: %w", owner, ErrClosed)
	}
	l := r.layerLocked(s)
	st.layer, st.grp = l, r.groupLocked(l, c)
	d, err := c.Defer("toolset:"+owner, func(context.Context) error {
		st.close()
		return nil
	})
	if err != nil {
		r.pruneLocked(l)
		return nil, fmt.Errorf("tool set %q: %w", owner, err)
	}
	st.dispose = d
	l.sets[st] = struct{}{}
	return st, nil
}

// Owner returns the set's owner.
func (s *Set) Owner() string { return s.owner }

// Names returns the names of the set's tools, sorted.
func (s *Set) Names() []string {
	s.r.mu.RLock()
	names := slices.Sorted(maps.Keys(s.tools))
	s.r.mu.RUnlock()
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
	l := s.layer
	for name, e := range next {
		if prev := l.tools[name]; prev != nil && prev.set != s {
			r.mu.Unlock()
			return duplicate(name, l.scope, prev.info.Owner, s.owner)
		}
		e.layer, e.set, e.grp, e.src, e.info.Scope = l, s, s.grp, s.src, l.scope
	}
	ch := Change{Scope: l.scope, Owner: s.owner}
	for name := range s.tools {
		if next[name] == nil {
			delete(l.tools, name)
			ch.Removed = append(ch.Removed, name)
		}
	}
	for name, e := range next {
		switch old := s.tools[name]; {
		case old == nil:
			ch.Added = append(ch.Added, name)
		case !sameInfo(old.info, e.info) || old.timeout != e.timeout:
			ch.Updated = append(ch.Updated, name)
		}
		l.tools[name] = e
	}
	s.tools = next
	r.version++
	r.mu.Unlock()
	r.notify(s.src, ch)
	return nil
}

// Clear removes every tool of the set and keeps it usable, emitting one [Changed] event if
// it had any.
func (s *Set) Clear() error { return s.Replace(nil) }

// Dispose removes the set's tools for good. It is idempotent; ctx bounds the wait for a
// disposal already in progress.
func (s *Set) Dispose(ctx context.Context) error { return s.dispose(ctx) }

// close runs when the set's effect is disposed.
func (s *Set) close() {
	r := s.r
	r.mu.Lock()
	if s.closed {
		r.mu.Unlock()
		return
	}
	s.closed = true
	l := s.layer
	delete(l.sets, s)
	ch := Change{Scope: l.scope, Owner: s.owner}
	for name, e := range s.tools {
		if l.tools[name] == e {
			delete(l.tools, name)
			ch.Removed = append(ch.Removed, name)
		}
	}
	s.tools = nil
	r.version++
	if s.grp.deferring() {
		s.grp.removed = append(s.grp.removed, ch.Removed...)
		r.mu.Unlock()
		return
	}
	r.pruneLocked(l)
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
	m := &mask{allow: slices.Clone(allow), deny: slices.Clone(deny), src: c}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, fmt.Errorf("restrict: %w", ErrClosed)
	}
	l := r.layerLocked(s)
	m.layer, m.grp = l, r.groupLocked(l, c)
	d, err := c.Defer("tools:restrict", func(context.Context) error {
		r.unrestrict(m)
		return nil
	})
	if err != nil {
		r.pruneLocked(l)
		r.mu.Unlock()
		return nil, fmt.Errorf("restrict: %w", err)
	}
	l.masks = append(l.masks, m)
	r.version++
	r.mu.Unlock()
	r.notify(c, Change{Scope: s, Owner: c.Scope().Name(), Restricted: true})
	return d, nil
}

func (r *Registry) unrestrict(m *mask) {
	r.mu.Lock()
	l := m.layer
	i := slices.Index(l.masks, m)
	if i < 0 {
		r.mu.Unlock()
		return
	}
	l.masks = slices.Delete(l.masks, i, i+1)
	r.version++
	if m.grp.deferring() {
		m.grp.masked = true
		r.mu.Unlock()
		return
	}
	r.pruneLocked(l)
	r.mu.Unlock()
	r.notify(m.src, Change{Scope: l.scope, Owner: m.src.Scope().Name(), Restricted: true})
}

// resolveLocked finds the tool called name as seen from s: the nearest layer wins, and a
// mask of a scope below that layer hides it. hidden names the masking scope.
func (r *Registry) resolveLocked(s *ctx.Scope, name string) (e *entry, hidden *ctx.Scope) {
	for x := s; x != nil; x = x.Parent() {
		l := r.layers[x]
		if l == nil {
			continue
		}
		if e := l.tools[name]; e != nil {
			if hidden != nil {
				return nil, hidden
			}
			return e, nil
		}
		if hidden == nil {
			for _, m := range l.masks {
				if m.hides(name) {
					hidden = x
					break
				}
			}
		}
	}
	return nil, nil
}

// Lookup returns the tool called name as visible from c's scope.
func (r *Registry) Lookup(c *ctx.Context, name string) (Info, bool) {
	r.mu.RLock()
	e, _ := r.resolveLocked(c.Scope(), name)
	r.mu.RUnlock()
	if e == nil {
		return Info{}, false
	}
	return e.info, true
}

// List returns the tools visible from c's scope, sorted by name: the registrations of the
// layers of the scope and its ancestors, the nearest registration of a name winning, minus
// what masks ([Registry.Restrict]) hide. The slice is the caller's; the listing is cached
// per scope until the next change.
func (r *Registry) List(c *ctx.Context) []Info {
	s := c.Scope()
	r.mu.RLock()
	defer r.mu.RUnlock()
	version := r.version
	r.cacheMu.Lock()
	cached, ok := r.cache[s]
	if ok && r.cacheVersion != version {
		ok = false
	}
	r.cacheMu.Unlock()
	if !ok {
		cached = r.listLocked(s)
		r.cacheMu.Lock()
		if r.cacheVersion != version || r.cache == nil {
			r.cache, r.cacheVersion = make(map[*ctx.Scope][]Info), version
		}
		r.cache[s] = cached
		r.cacheMu.Unlock()
	}
	return slices.Clone(cached)
}

func (r *Registry) listLocked(s *ctx.Scope) []Info {
	var (
		found []*entry
		seen  map[string]struct{}
		masks []*mask // masks of the levels below the current one
	)
	for x := s; x != nil; x = x.Parent() {
		l := r.layers[x]
		if l == nil {
			continue
		}
		if seen == nil {
			seen = make(map[string]struct{}, len(l.tools))
		}
		for name, e := range l.tools {
			if _, ok := seen[name]; ok {
				continue
			}
			seen[name] = struct{}{}
			if !masked(masks, name) {
				found = append(found, e)
			}
		}
		masks = append(masks, l.masks...)
	}
	slices.SortFunc(found, func(a, b *entry) int { return strings.Compare(a.info.Name, b.info.Name) })
	out := make([]Info, len(found))
	for i, e := range found {
		out[i] = e.info
	}
	return out
}

func masked(masks []*mask, name string) bool {
	for _, m := range masks {
		if m.hides(name) {
			return true
		}
	}
	return false
}

// close refuses new registrations once the registry's scope unloads.
func (r *Registry) close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
}
