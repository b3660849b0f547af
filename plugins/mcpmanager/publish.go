package mcpmanager

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// StatusEvent reports a managed server whose view changed: (name, status). It is emitted
// for every published change while the manager is live, from the manager's dispatcher
// worker with parallel dispatch: listeners run concurrently, their errors and panics
// are logged without skipping the others, and no manager operation waits for them. When
// listeners are slow, a server's intermediate states may be coalesced into its latest.
var StatusEvent = ctx.NewEvent[StatusChange]("mcp-manager/status")

// viewKey identifies a view across builds.
type viewKey struct {
	name    string
	src     Source
	removed bool
}

func keyOf(v View) viewKey { return viewKey{v.Name, v.Source, v.Removed} }

// dirtyLocked wakes the publisher.
func (m *Manager) dirtyLocked() {
	if m.pub != nil {
		m.pub.Kick()
	}
}

// buildLocked computes the current snapshot, maintaining Since, UpdatedAt and Version.
func (m *Manager) buildLocked() Snapshot {
	now := time.Now()
	var views []View
	for _, e := range m.settings {
		if reg := m.registrationLocked(e.name); reg != nil {
			views = append(views, m.conflictViewLocked(e, reg))
			continue
		}
		views = append(views, m.entryViewLocked(m.records[e.name], e, SourceSettings, nil))
	}
	for _, r := range m.regs {
		views = append(views, m.entryViewLocked(m.records[r.e.name], r.e, SourceRegistered, r))
	}
	var retained []*record
	for _, rec := range m.records {
		if _, ok := m.desiredLocked(rec); ok {
			rec.retSeq = 0
			continue
		}
		if rec.inst == nil && !rec.blocked {
			continue
		}
		if rec.retSeq == 0 {
			m.retSeq++
			rec.retSeq = m.retSeq
		}
		retained = append(retained, rec)
	}
	slices.SortFunc(retained, func(a, b *record) int { return cmp.Compare(a.retSeq, b.retSeq) })
	for _, rec := range retained {
		views = append(views, m.retainedViewLocked(rec))
	}

	// Each view is encoded once (its fingerprint) and compared with the last build's: this
	// runs on every mcpManager/list, so it must not encode the views again and again.
	changed := m.version == 0 || m.sstatus != m.lastSnap.Settings || len(views) != len(m.lastSnap.Servers)
	next := make(map[viewKey]View, len(views))
	nextFP := make(map[viewKey][]byte, len(views))
	for i := range views {
		v := &views[i]
		k := keyOf(*v)
		prev, had := m.last[k]
		switch {
		case had && prev.Status == v.Status:
			v.Since = m.since[k]
		default:
			v.Since = now
			m.since[k] = now
		}
		fp := v.fingerprint()
		if prevFP := m.lastFP[k]; had && fp != nil && bytes.Equal(prevFP, fp) {
			v.UpdatedAt = prev.UpdatedAt
		} else {
			v.UpdatedAt = now
			changed = true
		}
		if !changed && keyOf(m.lastSnap.Servers[i]) != k {
			changed = true // same views, another order
		}
		next[k], nextFP[k] = *v, fp
	}
	for k := range m.since {
		if _, ok := next[k]; !ok {
			delete(m.since, k)
		}
	}
	m.last, m.lastFP = next, nextFP

	snap := Snapshot{Servers: views, Settings: m.sstatus}
	if snap.Servers == nil {
		snap.Servers = []View{}
	}
	if changed {
		m.version++
	}
	snap.Version = m.version
	m.lastSnap = snap
	return cloneSnapshot(snap)
}

func cloneSnapshot(s Snapshot) Snapshot {
	out := s
	out.Servers = make([]View, len(s.Servers))
	for i, v := range s.Servers {
		out.Servers[i] = cloneView(v)
	}
	return out
}

// baseView fills what every view of e shows.
func baseView(e *entry, src Source) View {
	return View{
		Name:      e.name,
		Source:    src,
		Layer:     e.layer,
		Enabled:   e.enabled,
		Transport: e.cfg.Transport,
		Tools:     []string{},
		Config:    e.redacted(),
	}
}

// entryViewLocked is the view of a configured or registered entry that owns its name.
func (m *Manager) entryViewLocked(rec *record, e *entry, src Source, reg *registration) View {
	v := baseView(e, src)
	if reg != nil {
		v.Owner = reg.owner
	}
	if rec == nil {
		if !e.enabled {
			v.Status = StateDisabled
		} else if m.closed {
			v.Status = StateStopping
		} else {
			v.Status = StateStarting
		}
		return v
	}
	v.Starts = rec.starts
	d, _ := m.desiredLocked(rec)
	inst := rec.inst
	switch {
	case rec.blocked:
		v.Status, v.Error = StateCleanupIncomplete, rec.blockMsg
	case inst != nil && (inst.stopping || inst.key != d.key && !inst.updatable(d) || m.closed):
		v.Status = StateStopping
	case m.closed:
		v.Status = StateStopping
	case !e.enabled:
		v.Status = StateDisabled
	case inst == nil && rec.mountErr != "" && rec.mountKey == d.key:
		v.Status, v.Error = StateFailed, rec.mountErr
	case inst == nil:
		v.Status = StateStarting
	default:
		v.Status, v.Error = inst.state()
		if v.Status == StateStarting && !inst.hasReport && inst.scopeState == ctx.Pending {
			if _, ok := toolregistry.Key.Get(m.c); !ok {
				v.Error = "waiting for the tools service: mount the toolregistry plugin"
			}
		}
	}
	if inst != nil {
		inst.fill(&v)
	}
	return v
}

// conflictViewLocked is the view of a settings entry whose name a registration holds.
func (m *Manager) conflictViewLocked(e *entry, reg *registration) View {
	v := baseView(e, SourceSettings)
	if !e.enabled {
		v.Status = StateDisabled
		return v
	}
	v.Status = StateFailed
	v.Error = fmt.Sprintf("the name is taken by a server registered by %q; rename this settings entry", reg.owner)
	return v
}

// retainedViewLocked is the view of a record whose entry is gone.
func (m *Manager) retainedViewLocked(rec *record) View {
	e, src, owner := rec.lastEntry, rec.lastSource, rec.lastOwner
	if in := rec.inst; in != nil {
		e, src = in.e, in.src
		if in.owner != nil {
			owner = in.owner.owner
		}
	}
	v := baseView(e, src)
	v.Removed = true
	v.Owner = owner
	v.Starts = rec.starts
	switch {
	case rec.blocked:
		v.Status, v.Error = StateCleanupIncomplete, rec.blockMsg
	default:
		v.Status = StateStopping
	}
	if rec.inst != nil {
		rec.inst.fill(&v)
	}
	return v
}

// state derives a live instance's state from its scope and its last report.
func (in *instance) state() (State, string) {
	switch {
	case in.incomplete:
		return StateCleanupIncomplete, "the server's process group could not be confirmed gone; no new instance is started for this server until the host restarts"
	case in.loadErr != "":
		return StateFailed, in.loadErr
	case !in.hasReport:
		return StateStarting, ""
	}
	errText := in.scrub.Replace(in.report.Err)
	switch in.report.Phase {
	case mcpclient.PhaseConnected:
		return StateConnected, ""
	case mcpclient.PhaseLazy:
		return StateLazy, ""
	case mcpclient.PhaseIdle:
		return StateIdle, ""
	case mcpclient.PhaseReconnecting:
		return StateReconnecting, errText
	case mcpclient.PhaseNeedsAuth:
		return StateNeedsAuth, errText
	case mcpclient.PhaseFailed:
		return StateFailed, errText
	case mcpclient.PhaseDisposed:
		return StateStopping, ""
	default:
		return StateStarting, errText
	}
}

// fill copies the instance's details into v; an error already set is kept.
func (in *instance) fill(v *View) {
	v.StartedAt = in.startedAt
	v.ConnectedAt = in.connectedAt
	if !in.hasReport {
		return
	}
	r := in.report
	if r.Transport != "" {
		v.Transport = r.Transport
	}
	v.Attempt, v.MaxAttempts = r.Attempt, r.MaxAttempts
	if r.ServerName != "" || r.ServerVersion != "" {
		v.ServerInfo = &ServerInfo{Name: r.ServerName, Version: r.ServerVersion, Description: in.scrub.Replace(r.ServerDescription)}
	}
	v.ProtocolVersion = r.ProtocolVersion
	if r.Tools != nil {
		v.Tools = slices.Clone(r.Tools)
	}
	v.InstructionBytes = r.InstructionBytes
	v.StderrTail = in.scrub.Replace(r.StderrTail)
	if v.Error == "" && r.Err != "" && v.Status != StateConnected {
		v.Error = in.scrub.Replace(r.Err)
	}
}

// ---- publisher ------------------------------------------------------------------------

// publish is a run of the publisher worker: it builds the snapshot, hands it to every
// watcher and queues a StatusEvent for each view changed since the last run. Changes made
// while it runs kick it again.
func (m *Manager) publish(runcx context.Context) error {
	m.mu.Lock()
	if m.closed || runcx.Err() != nil {
		m.mu.Unlock()
		return nil
	}
	snap := m.buildLocked()
	for w := range m.watchers {
		w.offerLocked(snap)
	}
	m.mu.Unlock()

	seen := make(map[viewKey]bool, len(snap.Servers))
	queued := false
	for _, v := range snap.Servers {
		k := keyOf(v)
		seen[k] = true
		if prev, ok := m.sent[k]; ok && prev.equal(v) {
			continue
		}
		m.sent[k] = v
		m.log.Debug("mcp server status", "server", v.Name, "source", v.Source, "status", v.Status, "removed", v.Removed, "err", v.Error)
		m.events.push(k, StatusChange{Name: v.Name, Status: v})
		queued = true
	}
	for k, v := range m.sent {
		if !seen[k] {
			delete(m.sent, k)
			m.log.Debug("mcp server removed from the list", "server", v.Name, "source", v.Source)
			m.events.push(k, StatusChange{Name: v.Name, Status: v, Removed: true})
			queued = true
		}
	}
	if queued {
		m.emitter.Kick()
	}
	return nil
}

// eventQueue holds the status changes not emitted yet, at most one per view: a newer change
// of a view replaces the queued one, keeping its place. It is safe for concurrent use.
type eventQueue struct {
	mu      sync.Mutex
	order   []viewKey
	pending map[viewKey]StatusChange
}

func newEventQueue() *eventQueue {
	return &eventQueue{pending: make(map[viewKey]StatusChange)}
}

func (q *eventQueue) push(k viewKey, ch StatusChange) {
	q.mu.Lock()
	if _, queued := q.pending[k]; !queued {
		q.order = append(q.order, k)
	}
	q.pending[k] = ch
	q.mu.Unlock()
}

func (q *eventQueue) pop() (StatusChange, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.order) == 0 {
		return StatusChange{}, false
	}
	k := q.order[0]
	q.order = q.order[1:]
	ch := q.pending[k]
	delete(q.pending, k)
	return ch, true
}

// emit is a run of the emitter worker: it dispatches the queued changes, one at a time.
// Listeners run in parallel; a slow one delays later events (which coalesce meanwhile),
// never the manager or its watch streams.
func (m *Manager) emit(runcx context.Context) error {
	for runcx.Err() == nil {
		ch, ok := m.events.pop()
		if !ok {
			return nil
		}
		if err := StatusEvent.Parallel(m.c, ch); err != nil {
			m.log.Error("mcp-manager/status listener failed", "server", ch.Name, "err", err)
		}
	}
	return nil
}

// ---- watchers -------------------------------------------------------------------------

// watcher is one Watch subscription: a channel holding at most the latest snapshot.
type watcher struct {
	ch     chan Snapshot
	ver    uint64
	closed bool
	stop   func() bool
}

// offerLocked replaces whatever the subscriber has not read yet with snap.
func (w *watcher) offerLocked(snap Snapshot) {
	if w.closed || snap.Version <= w.ver {
		return
	}
	w.ver = snap.Version
	select {
	case <-w.ch:
	default:
	}
	w.ch <- snap // the buffer is empty: only the publisher and Watch send, under m.mu
}

func (w *watcher) closeLocked(m *Manager) {
	if w.closed {
		return
	}
	w.closed = true
	close(w.ch)
	delete(m.watchers, w)
	if w.stop != nil {
		w.stop()
	}
}

// Watch streams the server list: the current snapshot at once, then the whole snapshot
// again after every change. A subscriber that reads slowly gets the latest snapshot, not
// every intermediate one. The channel is closed when ctx ends or the manager stops;
// cancelling ctx ends only this subscription.
func (m *Manager) Watch(ccx context.Context) <-chan Snapshot {
	w := &watcher{ch: make(chan Snapshot, 1)}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		close(w.ch)
		return w.ch
	}
	m.watchers[w] = struct{}{}
	w.offerLocked(m.buildLocked())
	w.stop = context.AfterFunc(ccx, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		w.closeLocked(m)
	})
	return w.ch
}

// List returns the server views: configured entries in document order, then registered
// entries in registration order, then retained records of removed entries.
func (m *Manager) List() []View {
	return m.Snapshot().Servers
}

// list is mcpManager/list's answer: the snapshot, encoded once per version (a version's
// snapshot never changes, so a page or a script that polls gets the same bytes until
// something does).
func (m *Manager) list() (ListResult, error) {
	m.mu.Lock()
	snap := m.buildLocked()
	if snap.Version == m.listVersion && m.listBody != nil {
		b := m.listBody
		m.mu.Unlock()
		return ListResult{Snapshot: snap, encoded: b}, nil
	}
	m.mu.Unlock()
	b, err := json.Marshal(snap)
	if err != nil {
		return ListResult{}, err
	}
	m.mu.Lock()
	if snap.Version >= m.listVersion {
		m.listVersion, m.listBody = snap.Version, b
	}
	m.mu.Unlock()
	return ListResult{Snapshot: snap, encoded: b}, nil
}

// MarshalJSON encodes the snapshot, reusing the host's encoding of its version.
func (r ListResult) MarshalJSON() ([]byte, error) {
	if r.encoded != nil {
		return r.encoded, nil
	}
	return json.Marshal(r.Snapshot)
}

// Snapshot returns the views together with the settings file's status.
func (m *Manager) Snapshot() Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.buildLocked()
}
