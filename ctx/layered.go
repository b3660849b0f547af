package ctx

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// ErrDuplicateName is matched ([errors.Is]) by the [*DuplicateError] of a second value under
// one name in one layer of a [Layers].
var ErrDuplicateName = errors.New("name already taken in this layer")

// Layers holds named values per layer: the root scope, and every agent scope marked with
// [Context.Layered]. It is the one place where the harness defines which registrations a
// scope sees, for tools, tool masks, prompt sections, resource providers and MCP server
// names alike:
//
//   - A value is added under a name into the caller's layer ([Context.Layer]), normally as an
//     effect of the caller ([Layers.Add]): it goes when the returned disposer runs or the
//     caller's scope unloads.
//   - A scope sees the values of its own layer and of every enclosing layer, up to the root;
//     never those of a sibling or a descendant layer.
//   - Under one name the nearest layer wins: a value shadows the values of the same name in
//     enclosing layers, for the scopes of its layer's subtree only.
//   - One name holds one value per layer: a second is refused with a [*DuplicateError];
//     another layer may reuse the name.
//
// Keys are scopes, and scopes belong to one tree, so trees never see each other's values,
// even through one Layers. Every change bumps [Layers.Version], which stamps derived views
// (see [LayerCache]). An empty layer is forgotten: a Layers retains no disposed scope.
//
// A Layers is safe for concurrent use. [Layers.Get] takes no lock: it reads an immutable
// copy of the values, rebuilt by the first Get after a change (a read lock, even
// uncontended, writes a counter every core shares, and Get is on every tool call's path).
// The other lookups take a read lock. No lock is held while the callbacks given to it run,
// so they may call back into it.
type Layers[T any] struct {
	kind    string
	mu      sync.RWMutex
	byLayer map[*Scope]map[string]*slot[T] // guarded by mu
	count   atomic.Int64                   // values in all layers; written under mu
	version atomic.Uint64                  // bumped under mu after every change
	view    atomic.Pointer[layersView[T]]  // what Get reads: set under a read lock, cleared under the write lock
}

// layersView is an immutable copy of a Layers' values.
type layersView[T any] struct {
	byLayer map[*Scope]map[string]Entry[T]
}

// changedLocked records a change: the version moves on and Get's copy is dropped (so no
// disposed scope stays in it). l.mu is held for writing.
func (l *Layers[T]) changedLocked() {
	l.version.Add(1)
	l.view.Store(nil)
}

// slot is one value in one layer. entry and owner are immutable; gone is guarded by
// Layers.mu.
type slot[T any] struct {
	entry Entry[T]
	owner any // the batch owner ([Layers.Replace]), or the slot itself for [Layers.Add]
	gone  bool
}

// Entry is one value of a [Layers] with its name and the layer holding it. It is a plain
// value.
type Entry[T any] struct {
	// Name is the value's name within its layer.
	Name string
	// Value is the value as added.
	Value T
	// Layer is the scope of the layer that holds it.
	Layer *Scope
}

// DuplicateError reports a value refused because its layer already holds one under the same
// name. It matches [ErrDuplicateName]. The caller's message usually names both owners, which
// it finds in Existing.
//
// A DuplicateError is not modified after it is returned.
type DuplicateError[T any] struct {
	// Kind is the [Layers]' kind ("tool", "section", ...).
	Kind string
	// Name is the contested name.
	Name string
	// Layer is the scope of the layer holding it.
	Layer *Scope
	// Existing is the value already held.
	Existing T
}

// Error names the kind, the name and the layer.
func (e *DuplicateError[T]) Error() string {
	return fmt.Sprintf("%s %q is already registered in layer %q", e.Kind, e.Name, e.Layer.Name())
}

// Unwrap returns [ErrDuplicateName].
func (e *DuplicateError[T]) Unwrap() error { return ErrDuplicateName }

// NewLayers returns an empty set of layered values. kind names what it holds, in errors and
// in the labels of the effects [Layers.Add] registers ("tool", "section", ...).
func NewLayers[T any](kind string) *Layers[T] {
	return &Layers[T]{kind: kind, byLayer: make(map[*Scope]map[string]*slot[T])}
}

// Kind returns the kind given to [NewLayers].
func (l *Layers[T]) Kind() string { return l.kind }

// Add puts v under name into c's layer ([Context.Layer]) as an effect of c: the returned
// disposer, or the unload of c's scope, takes it out again, and then calls removed (when
// not nil) outside every lock — that is where a service announces the removal. The disposer
// is idempotent; removed runs at most once, and only for a value that was added.
//
// The value is visible from the layer's scope and its descendants as soon as Add returns.
// A name the layer already holds is refused with a [*DuplicateError] (the holder is not
// affected); an inactive c is refused with an error wrapping [ErrInactive], which the
// caller wraps in turn to name the value.
func (l *Layers[T]) Add(c *Context, name string, v T, removed func()) (Disposer, error) {
	sl := &slot[T]{entry: Entry[T]{Name: name, Value: v, Layer: c.Layer()}}
	sl.owner = sl
	// The effect comes first, so that a value is never visible without the effect that
	// removes it; the slot is published once the effect is in place.
	dispose, err := c.Defer(l.kind+":"+name, func(context.Context) error {
		if l.take(sl) && removed != nil {
			removed()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	if sl.gone { // c's scope unloaded between Defer and now
		l.mu.Unlock()
		return nil, ErrInactive
	}
	if prev := l.byLayer[sl.entry.Layer][name]; prev != nil {
		sl.gone = true
		l.mu.Unlock()
		_ = dispose(context.Background()) // finds nothing to remove
		return nil, &DuplicateError[T]{Kind: l.kind, Name: name, Layer: sl.entry.Layer, Existing: prev.entry.Value}
	}
	l.putLocked(sl)
	l.changedLocked()
	l.mu.Unlock()
	return dispose, nil
}

// putLocked publishes sl in its layer.
func (l *Layers[T]) putLocked(sl *slot[T]) {
	m := l.byLayer[sl.entry.Layer]
	if m == nil {
		m = make(map[string]*slot[T])
		l.byLayer[sl.entry.Layer] = m
	}
	m[sl.entry.Name] = sl
	l.count.Add(1)
}

// deleteLocked unpublishes sl, forgetting its layer once empty.
func (l *Layers[T]) deleteLocked(sl *slot[T]) {
	m := l.byLayer[sl.entry.Layer]
	delete(m, sl.entry.Name)
	if len(m) == 0 {
		delete(l.byLayer, sl.entry.Layer)
	}
	sl.gone = true
	l.count.Add(-1)
}

// take removes sl if it is still published, reporting whether it was.
func (l *Layers[T]) take(sl *slot[T]) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if sl.gone {
		return false
	}
	if l.byLayer[sl.entry.Layer][sl.entry.Name] != sl { // not published yet: Add refuses it
		sl.gone = true
		return false
	}
	l.deleteLocked(sl)
	l.changedLocked()
	return true
}

// Replace swaps, in one step, the values owner holds in layer for vals: names of vals that
// owner did not hold are added, names it held that vals lacks are removed, the others are
// replaced. owner is any comparable identity (a tool set, say); its values are not effects:
// the caller removes them (Replace with no values) when their owner goes.
//
// If a name of vals is held in layer by another owner, nothing changes and the error is a
// [*DuplicateError] for the first such name in byte order. old returns the values owner held
// before, by name.
func (l *Layers[T]) Replace(layer *Scope, owner any, vals map[string]T) (old map[string]T, err error) {
	names := slices.Sorted(maps.Keys(vals))
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.byLayer[layer]
	for _, name := range names {
		if prev := m[name]; prev != nil && prev.owner != owner {
			return nil, &DuplicateError[T]{Kind: l.kind, Name: name, Layer: layer, Existing: prev.entry.Value}
		}
	}
	old = make(map[string]T)
	for name, sl := range m {
		if sl.owner == owner {
			old[name] = sl.entry.Value
			if _, keep := vals[name]; !keep {
				l.deleteLocked(sl)
			}
		}
	}
	for _, name := range names {
		if prev := l.byLayer[layer][name]; prev != nil {
			prev.gone = true
			l.count.Add(-1)
		}
		l.putLocked(&slot[T]{entry: Entry[T]{Name: name, Value: vals[name], Layer: layer}, owner: owner})
	}
	if len(old) > 0 || len(vals) > 0 {
		l.changedLocked()
	}
	return old, nil
}

// RemoveFunc removes the values of layer for which drop reports true and returns them,
// sorted by name. drop runs under the write lock: it must only look at the entry. The
// disposers of removed [Layers.Add] values then find nothing to remove (and do not call
// their removed callback).
func (l *Layers[T]) RemoveFunc(layer *Scope, drop func(Entry[T]) bool) []Entry[T] {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Entry[T]
	for _, sl := range l.byLayer[layer] {
		if drop(sl.entry) {
			l.deleteLocked(sl)
			out = append(out, sl.entry)
		}
	}
	if len(out) > 0 {
		l.changedLocked()
		sortEntries(out)
	}
	return out
}

// Get returns the value called name as seen from s: the one of the nearest layer at or above
// s that holds the name.
func (l *Layers[T]) Get(s *Scope, name string) (Entry[T], bool) {
	v := l.view.Load()
	if v == nil {
		v = l.rebuild()
	}
	if len(v.byLayer) != 0 {
		for x := s; x != nil; x = x.parent {
			if e, ok := v.byLayer[x][name]; ok {
				return e, true
			}
		}
	}
	return Entry[T]{}, false
}

// rebuild copies the values into a new view for Get and publishes it. It holds the read
// lock until the view is published, so a change (which clears the view under the write
// lock) is never overwritten by a copy made before it.
func (l *Layers[T]) rebuild() *layersView[T] {
	l.mu.RLock()
	defer l.mu.RUnlock()
	v := &layersView[T]{byLayer: make(map[*Scope]map[string]Entry[T], len(l.byLayer))}
	for layer, m := range l.byLayer {
		es := make(map[string]Entry[T], len(m))
		for name, sl := range m {
			es[name] = sl.entry
		}
		v.byLayer[layer] = es
	}
	l.view.Store(v)
	return v
}

// Visible returns every value s sees, sorted by name: for each name, the value of the
// nearest layer at or above s. The slice is the caller's.
func (l *Layers[T]) Visible(s *Scope) []Entry[T] {
	l.mu.RLock()
	var out []Entry[T]
	if len(l.byLayer) != 0 {
		n := 0
		for x := s; x != nil; x = x.parent {
			n += len(l.byLayer[x])
		}
		out = make([]Entry[T], 0, n)
		var seen map[string]struct{}
		for x := s; x != nil; x = x.parent {
			m := l.byLayer[x]
			if len(m) == 0 {
				continue
			}
			if seen == nil {
				seen = make(map[string]struct{}, len(m))
			}
			for name, sl := range m {
				if _, shadowed := seen[name]; !shadowed {
					seen[name] = struct{}{}
					out = append(out, sl.entry)
				}
			}
		}
	}
	l.mu.RUnlock()
	sortEntries(out)
	return out
}

// In returns the values held by the layer of scope layer itself, sorted by name.
func (l *Layers[T]) In(layer *Scope) []Entry[T] {
	l.mu.RLock()
	out := make([]Entry[T], 0, len(l.byLayer[layer]))
	for _, sl := range l.byLayer[layer] {
		out = append(out, sl.entry)
	}
	l.mu.RUnlock()
	sortEntries(out)
	return out
}

// Nearest returns the nearest scope at or above s whose layer holds a value, or nil. Every
// scope between s and it sees what it sees: it is the key under which a view of s can be
// shared.
func (l *Layers[T]) Nearest(s *Scope) *Scope {
	l.mu.RLock()
	defer l.mu.RUnlock()
	for x := s; x != nil && len(l.byLayer) != 0; x = x.parent {
		if _, ok := l.byLayer[x]; ok {
			return x
		}
	}
	return nil
}

// Len returns the number of values held, in all layers. It takes no lock.
func (l *Layers[T]) Len() int { return int(l.count.Load()) }

// Version returns a counter bumped by every change. A view derived from the values after
// reading version v is current for as long as Version returns v.
func (l *Layers[T]) Version() uint64 { return l.version.Load() }

func sortEntries[T any](es []Entry[T]) {
	slices.SortFunc(es, func(a, b Entry[T]) int { return strings.Compare(a.Name, b.Name) })
}

// LayerCache keeps one derived value (a listing, a merged view) per key scope, valid for one
// version of the [Layers] it is derived from; the first lookup with a newer version drops
// every cached value.
//
// The zero value is ready to use. A LayerCache is safe for concurrent use; build runs
// without the cache's lock held.
type LayerCache[V any] struct {
	mu      sync.RWMutex
	version uint64
	views   map[*Scope]V
}

// Get returns the value cached for key at version, calling build to make it when there is
// none. Read version before reading what build derives from, so that a concurrent change
// makes the result stale, never wrong.
func (c *LayerCache[V]) Get(key *Scope, version uint64, build func() V) V {
	c.mu.RLock()
	if c.version == version && c.views != nil {
		if v, ok := c.views[key]; ok {
			c.mu.RUnlock()
			return v
		}
	}
	c.mu.RUnlock()
	v := build()
	c.mu.Lock()
	if c.version != version || c.views == nil {
		if version < c.version && c.views != nil {
			c.mu.Unlock()
			return v // built from an older version than the cache holds: do not keep it
		}
		c.views, c.version = make(map[*Scope]V), version
	}
	c.views[key] = v
	c.mu.Unlock()
	return v
}

// Len returns the number of cached values (for tests of retention).
func (c *LayerCache[V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.views)
}

// TreeLayers names a [Layers] kept by each scope tree, for a plugin that has no service
// object to keep one in (the MCP client reserving server names): declare it once, as a
// package variable like a [Key], and reach the tree's set with [TreeLayers.In]. The values
// live and die with their tree; nothing is shared between trees.
//
// A TreeLayers is immutable and safe for concurrent use.
type TreeLayers[T any] struct{ kind string }

// NewTreeLayers declares a per-tree [Layers] of the given kind.
func NewTreeLayers[T any](kind string) *TreeLayers[T] { return &TreeLayers[T]{kind: kind} }

// In returns c's tree's set, creating it on first use.
func (k *TreeLayers[T]) In(c *Context) *Layers[T] {
	r := c.scope.r
	if v, ok := r.layered.Load(k); ok {
		return v.(*Layers[T])
	}
	v, _ := r.layered.LoadOrStore(k, NewLayers[T](k.kind))
	return v.(*Layers[T])
}

// LayerChange is a value added to a layer or gone from it: its name and the layer's scope
// (what [TreeLayers.AddAnnounced] emits). It is a plain value.
type LayerChange struct {
	Name  string
	Layer *Scope
}

// AddAnnounced adds v under name into c's layer of c's tree's set as [Layers.Add] does, and
// emits changed from c, with the name and the layer, once v is added and again once it is
// gone: for values whose coming and going others follow (elicitation's responders and
// sampling's samplers decide what an MCP client declares). A listener's error is logged.
func (k *TreeLayers[T]) AddAnnounced(c *Context, name string, v T, changed Event[LayerChange]) (Disposer, error) {
	dispose, announce, err := k.AddAnnouncedLater(c, name, v, changed)
	if err != nil {
		return nil, err
	}
	announce()
	return dispose, nil
}

// AddAnnouncedLater is [TreeLayers.AddAnnounced] whose first announcement is the caller's:
// v is in place when it returns, and announce emits changed (its going is announced as
// AddAnnounced's is). Values of several sets added as one step are all in place before any
// is announced (gateway.Offer: elicitation and sampling, so that a client that follows
// both reconnects once for them, not once each).
func (k *TreeLayers[T]) AddAnnouncedLater(c *Context, name string, v T, changed Event[LayerChange]) (_ Disposer, announce func(), _ error) {
	announce = func() {
		if err := changed.Emit(c, LayerChange{Name: name, Layer: c.Layer()}); err != nil {
			c.Logger().Warn("change listener failed", "event", changed.Name(), "name", name, "err", err)
		}
	}
	dispose, err := k.In(c).Add(c, name, v, announce)
	if err != nil {
		return nil, nil, err
	}
	return dispose, announce, nil
}
