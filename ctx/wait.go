package ctx

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Teardowns wait for one another in two ways: a withdrawal by scope S waits for each
// dependent D of the service to finish unloading (edge S → D, "breakable"), and the unload
// of a parent waits for the disposal of each child it mounted (edge parent → child). These
// waits are recorded in root.waits while they last. The rule that keeps the tree from
// stalling: a wait that would close a cycle of such edges is never made. When the new edge
// is a withdrawal's, the withdrawal simply does not wait for that dependent (the dependent
// is, directly or through the teardowns it waits for, waiting for S, so waiting for it
// would never end); when it is a parent's, a withdrawal's edge on the cycle is broken and
// that withdrawal goes on. Every cycle contains a withdrawal's edge, since parent → child
// edges alone follow the tree downwards. The edges are attributed to the scope that owns
// the withdrawn service or the child, which is conservative: at worst a withdrawal gives
// up an ordering it could have kept, never the tree's progress.

// waitEdge is one recorded wait. Guarded by root.mu.
type waitEdge struct {
	from, to  *Scope
	breakable bool
	broken    chan struct{} // closed when the wait is given up to break a cycle
}

// pathLocked returns the recorded edges leading from start to target, or nil.
func (r *root) pathLocked(start, target *Scope) []*waitEdge {
	seen := map[*Scope]bool{start: true}
	var walk func(at *Scope) []*waitEdge
	walk = func(at *Scope) []*waitEdge {
		for _, e := range r.waits[at] {
			if e.to == target {
				return []*waitEdge{e}
			}
			if seen[e.to] {
				continue
			}
			seen[e.to] = true
			if p := walk(e.to); p != nil {
				return append([]*waitEdge{e}, p...)
			}
		}
		return nil
	}
	return walk(start)
}

// addWaitLocked records that from's teardown waits for to. It returns nil, recording
// nothing, when the wait is breakable and would close a cycle.
func (r *root) addWaitLocked(from, to *Scope, breakable bool) *waitEdge {
	if path := r.pathLocked(to, from); path != nil {
		if breakable {
			return nil
		}
		if i := slices.IndexFunc(path, func(e *waitEdge) bool { return e.breakable }); i >= 0 {
			close(path[i].broken)
			r.removeWaitLocked(path[i])
		}
	}
	e := &waitEdge{from: from, to: to, breakable: breakable, broken: make(chan struct{})}
	if r.waits == nil {
		r.waits = make(map[*Scope][]*waitEdge)
	}
	r.waits[from] = append(r.waits[from], e)
	return e
}

func (r *root) removeWaitLocked(e *waitEdge) {
	list := slices.DeleteFunc(r.waits[e.from], func(x *waitEdge) bool { return x == e })
	if len(list) == 0 {
		delete(r.waits, e.from)
	} else {
		r.waits[e.from] = list
	}
}

// awaitDependent waits, on behalf of a withdrawal of service by s, until the dependent d
// has no transition in flight. It returns nil at once when waiting would close a cycle (see
// above), and an error wrapping ctx's error when ctx ends first.
func (r *root) awaitDependent(cx context.Context, s, d *Scope, service string) error {
	r.mu.Lock()
	e := r.addWaitLocked(s, d, true)
	if e == nil {
		r.mu.Unlock()
		s.logger.Debug("withdrawal does not wait for a dependent that waits for this scope", "service", service, "dependent", d.name, "dependent_id", d.id)
		return nil
	}
	defer func() {
		r.mu.Lock()
		r.removeWaitLocked(e)
		r.mu.Unlock()
	}()
	for d.eng.running {
		ch := d.eng.idle
		r.mu.Unlock()
		select {
		case <-ch:
		case <-e.broken:
			s.logger.Debug("withdrawal stops waiting for a dependent that waits for this scope", "service", service, "dependent", d.name, "dependent_id", d.id)
			return nil
		case <-cx.Done():
			return fmt.Errorf("withdraw service %q: dependent %s still unloading: %w", service, d, cx.Err())
		}
		r.mu.Lock()
	}
	r.mu.Unlock()
	return nil
}

// noteDeadlineLocked records the deadline of cx, if it has one, for s's next unload: the
// context handed to its disposers ends then. The earliest deadline given wins; it is
// forgotten when the scope's transitions end.
func (s *Scope) noteDeadlineLocked(cx context.Context) {
	if d, ok := cx.Deadline(); ok && (s.deadline.IsZero() || d.Before(s.deadline)) {
		s.deadline = d
	}
}

// unwindLocked returns the context for an unload of s starting now: the tree's base values
// and the deadline a caller gave, if any. The recorded deadline is consumed.
func (s *Scope) unwindLocked() (context.Context, context.CancelFunc) {
	if s.deadline.IsZero() {
		return s.r.unwindCtx, func() {}
	}
	d := s.deadline
	s.deadline = time.Time{}
	return context.WithDeadline(s.r.unwindCtx, d)
}
