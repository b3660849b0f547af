package mcpmanager

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/secrets"
)

// disposeTimeout bounds the disposal of one client instance. The client bounds its own
// close (graceful phase, then the process group is killed within fixed bounds), so this
// only trips on a wedged instance, which is then reported as cleanup-incomplete.
const disposeTimeout = 30 * time.Second

// Manager is the mcpManager service: it runs the servers of the settings file and those
// plugins register, and reports their status.
//
// Concurrency: every method is safe for concurrent use. One mutex guards the manager's
// state and is never held while other code runs (client mounts and disposals, listeners,
// credentials lookups, probes). Every goroutine of the manager is an effect of its scope:
// each server name has a [ctx.Worker] that replaces its instance (dispose, then mount, one
// step at a time), so the replacements of one server never overlap while those of
// different servers run in parallel and a slow server never delays another. Watch streams
// are fed by a publisher worker and status events dispatched by another, so neither a slow
// subscriber nor a slow or failing listener ever blocks the manager. Each instance is a
// child scope of the manager's, mounting the client plugin with the resolved entry as its
// configuration.
type Manager struct {
	c       *ctx.Context // the manager's activation
	servers *ctx.Context // where instances and per-server workers live (see apply)
	scope   *ctx.Scope
	log     *slog.Logger
	cfg     Config
	hk      hooks
	creds   *secrets.FileCredentials
	pub     *ctx.Worker // builds and offers snapshots, queues events (publish.go)
	emitter *ctx.Worker // dispatches queued StatusEvents
	events  *eventQueue
	sent    map[viewKey]View // views last queued as events; the publisher's own

	mu       sync.Mutex
	active   bool // the manager's scope is active: clients can find the status sink
	closed   bool
	settings []*entry // the running (last good) settings, document order
	sstatus  SettingsStatus
	lastData []byte          // the settings file's content as last applied
	regs     []*registration // registration order
	regSeq   uint64
	open     map[*registration]struct{} // registrations whose gone channel is open
	records  map[string]*record
	retSeq   uint64

	// Published state (see publish.go).
	version  uint64
	last     map[viewKey]View   // last built view per entry, for Since and UpdatedAt
	lastFP   map[viewKey][]byte // the fingerprints of last's views
	since    map[viewKey]time.Time
	lastSnap Snapshot
	watchers map[*watcher]struct{}
	// listVersion and listBody: the last mcpManager/list answer, encoded (listJSON).
	listVersion uint64
	listBody    json.RawMessage
}

// hooks are the manager's seams: production values by default, replaced by tests.
type hooks struct {
	client    ctx.PluginDef
	probe     func(context.Context, mcpclient.Config, ProbeOptions) mcpclient.ProbeResult
	lookupEnv func(string) (string, bool)
}

// hooksKey carries *hooks on the context a test mounts the plugin on.
type hooksKey struct{}

// registration is one Register call.
type registration struct {
	e       *entry
	owner   string
	seq     uint64
	removed bool
	gone    chan struct{} // closed once removed and no instance of it is left
	closed  bool
}

// record is the runtime of one server name: its worker and instance. A record that holds
// nothing any more is forgotten by its worker's last run.
type record struct {
	name     string
	w        *ctx.Worker  // nil once the manager is unloading
	stop     ctx.Disposer // disposes w
	inst     *instance    // the mounted instance
	pending  *instance    // the instance being mounted (reports may arrive before its scope is known)
	restarts uint64
	// mountKey and mountErr: the last mount of the definition with key mountKey failed.
	mountKey string
	mountErr string
	blocked  bool // cleanup incomplete: never mount again
	blockMsg string
	starts   int
	probes   map[*probeRun]struct{}
	// retained: the desired entry is gone; retSeq orders retained records. lastEntry and
	// lastSource describe what the record last ran.
	retSeq     uint64
	lastEntry  *entry
	lastSource Source
	lastOwner  string
}

// instance is one mounted client scope.
type instance struct {
	scope     *ctx.Scope
	e         *entry
	src       Source
	owner     *registration
	key       string // desired key it was mounted for
	scrub     *secrets.Scrubber
	startedAt time.Time

	report      mcpclient.Status
	hasReport   bool
	connectedAt time.Time
	scopeState  ctx.State
	loadErr     string
	stopping    bool
	incomplete  bool
	noUpdate    bool // an in-place update failed: replace the instance instead
}

// probeRun is one running probe.
type probeRun struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
}

// errEntryChanged is the cancellation cause of probes whose entry changed.
var errEntryChanged = errors.New("the server's entry changed, or it is being replaced")

func newManager(c *ctx.Context, cfg Config, hk hooks) *Manager {
	if hk.lookupEnv == nil {
		hk.lookupEnv = os.LookupEnv
	}
	if hk.client == nil {
		hk.client = mcpclient.Plugin
	}
	if hk.probe == nil {
		hk.probe = clientProbe
	}
	m := &Manager{
		c:        c,
		scope:    c.Scope(),
		log:      c.Logger(),
		cfg:      cfg,
		hk:       hk,
		records:  make(map[string]*record),
		open:     make(map[*registration]struct{}),
		last:     make(map[viewKey]View),
		lastFP:   make(map[viewKey][]byte),
		since:    make(map[viewKey]time.Time),
		watchers: make(map[*watcher]struct{}),
		events:   newEventQueue(),
		sent:     make(map[viewKey]View),
	}
	if cfg.credentialsPath != "" {
		m.creds = secrets.NewFileCredentials(cfg.credentialsPath)
	}
	m.sstatus.File = cfg.settingsPath
	m.sstatus.ProjectFile = cfg.projectPath
	return m
}

// ---- desired state --------------------------------------------------------------------

// desired is what a name should run: the entry, its source and registration.
type desired struct {
	e   *entry
	src Source
	reg *registration
	key string
}

// desiredLocked returns what name should run, or ok=false when nothing defines it.
// A registration wins over a settings entry of the same name (it can only exist if the
// settings entry appeared after it).
func (m *Manager) desiredLocked(rec *record) (desired, bool) {
	for _, r := range m.regs {
		if r.e.name == rec.name {
			return desired{e: r.e, src: SourceRegistered, reg: r,
				key: "registered#" + strconv.FormatUint(r.seq, 10) + "#" + strconv.FormatUint(rec.restarts, 10) + "#" + r.e.key}, true
		}
	}
	if e := m.settingsEntryLocked(rec.name); e != nil {
		return desired{e: e, src: SourceSettings, key: "settings#" + strconv.FormatUint(rec.restarts, 10) + "#" + e.key}, true
	}
	return desired{}, false
}

func (m *Manager) settingsEntryLocked(name string) *entry {
	for _, e := range m.settings {
		if e.name == name {
			return e
		}
	}
	return nil
}

func (m *Manager) registrationLocked(name string) *registration {
	for _, r := range m.regs {
		if r.e.name == name {
			return r
		}
	}
	return nil
}

// recordLocked returns the record of name, creating it with its worker.
func (m *Manager) recordLocked(name string) *record {
	rec := m.records[name]
	if rec == nil {
		rec = &record{name: name, probes: make(map[*probeRun]struct{})}
		// Fails only once the manager is unloading; the record then has nothing to run.
		rec.w, rec.stop, _ = m.servers.NewWorker("mcpManager.server:"+name, func(runcx context.Context) error {
			m.work(runcx, rec)
			return nil
		})
		m.records[name] = rec
	}
	return rec
}

// forgetLocked drops rec if it holds nothing any more, and reports whether it did.
func (m *Manager) forgetLocked(rec *record) bool {
	if m.closed || rec.inst != nil || rec.pending != nil || rec.blocked || len(rec.probes) > 0 || m.records[rec.name] != rec {
		return false
	}
	if _, ok := m.desiredLocked(rec); ok {
		return false
	}
	delete(m.records, rec.name)
	return true
}

// ---- workers --------------------------------------------------------------------------

// kickLocked makes rec's worker look at it, and returns a channel closed once it has.
func (m *Manager) kickLocked(rec *record) <-chan struct{} {
	if (!m.active && !m.closed) || rec.w == nil {
		return nil // activate kicks every record
	}
	return rec.w.Kick()
}

// cancelProbesLocked cancels rec's probes and returns their done channels.
func cancelProbesLocked(rec *record) []chan struct{} {
	var out []chan struct{}
	for p := range rec.probes {
		p.cancel(errEntryChanged)
		out = append(out, p.done)
	}
	return out
}

// action is the next step a worker takes for a record.
type action uint8

const (
	actIdle action = iota
	actDispose
	actMount
	actUpdate // a change of roots alone: the running client takes it (mcpclient.RootsOnlyChange)
)

// nextLocked returns the next step towards rec's desired state.
func (m *Manager) nextLocked(rec *record) (action, desired) {
	d, ok := m.desiredLocked(rec)
	inst := rec.inst
	switch {
	case inst != nil && !m.closed && ok && d.e.enabled && inst.owner == d.reg && inst.key != d.key && inst.updatable(d):
		return actUpdate, d
	case inst != nil && (m.closed || !ok || !d.e.enabled || inst.key != d.key || inst.owner != d.reg):
		return actDispose, d
	case inst == nil && ok && d.e.enabled && !rec.blocked && !m.closed && rec.mountKey != d.key:
		return actMount, d
	}
	return actIdle, d
}

// changingLocked reports whether rec's instance is being replaced, or is about to be.
func (m *Manager) changingLocked(rec *record) bool {
	if rec.pending != nil || (rec.inst != nil && rec.inst.stopping) {
		return true
	}
	act, _ := m.nextLocked(rec)
	return act != actIdle
}

// work is a run of rec's worker: it moves rec towards its desired state, one step at a
// time, until nothing is left. Probes of rec are cancelled, and their cleanup awaited,
// before each step.
func (m *Manager) work(runcx context.Context, rec *record) {
	for {
		m.mu.Lock()
		act, d := m.nextLocked(rec)
		inst := rec.inst
		switch act {
		case actDispose:
			inst.stopping = true
		case actMount:
			rec.pending = &instance{e: d.e, src: d.src, owner: d.reg, key: d.key}
		case actUpdate:
		default:
			forget := m.forgetLocked(rec)
			m.dirtyLocked()
			m.mu.Unlock()
			if forget {
				_ = rec.stop(runcx) // from its own run: does not wait
			}
			return
		}
		probes := cancelProbesLocked(rec)
		m.dirtyLocked()
		m.mu.Unlock()
		for _, ch := range probes {
			<-ch
		}
		switch act {
		case actDispose:
			m.dispose(rec, inst)
		case actUpdate:
			m.update(rec, inst, d)
		default:
			m.mount(rec, d)
		}
	}
}

// mount resolves d and mounts a client for it as a child scope whose configuration is the
// resolved entry, then records the instance.
func (m *Manager) mount(rec *record, d desired) {
	r := &secrets.Resolver{LookupEnv: m.hk.lookupEnv, Secrets: m.credentials, Scrubber: secrets.ScrubberOf(m.c)}
	res, err := d.e.resolve(r)
	var scope *ctx.Scope
	if err == nil {
		scope, err = m.servers.Plugin(m.hk.client, res.cfg)
		if errors.Is(err, ctx.ErrInactive) {
			err = errClosed()
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	inst := rec.pending
	rec.pending = nil
	defer m.dirtyLocked()
	rec.lastEntry, rec.lastSource = d.e, d.src
	if err != nil {
		msg := err.Error()
		if res != nil {
			msg = res.scrub.Replace(msg)
		}
		rec.mountKey, rec.mountErr = d.key, msg
		if !m.closed {
			m.log.Warn("mcp server not started", "server", rec.name, "err", msg)
		}
		m.closeGoneLocked(d.reg)
		return
	}
	rec.mountKey, rec.mountErr = "", ""
	rec.starts++
	rec.lastOwner = ""
	if d.reg != nil {
		rec.lastOwner = d.reg.owner
	}
	inst.scope, inst.scrub, inst.startedAt = scope, res.scrub, time.Now()
	rec.inst = inst
	if inst.incomplete { // reported before the mount was recorded
		m.blockLocked(rec, "the server's process group could not be confirmed gone")
	}
	m.applyScopeStateLocked(inst, scope.State(), scope.Err())
	m.log.Debug("mcp server mounted", "server", rec.name, "source", d.src, "instance", scope.ID())
}

// updatable reports whether d differs from what inst runs in its roots alone, for the same
// source and restart count: the running client can take it without a reconnect.
func (inst *instance) updatable(d desired) bool {
	if inst.noUpdate || inst.e == nil || inst.e.name != d.e.name {
		return false
	}
	return strings.TrimSuffix(inst.key, inst.e.key) == strings.TrimSuffix(d.key, d.e.key) &&
		mcpclient.RootsOnlyChange(inst.e.cfg, d.e.cfg)
}

// update hands inst's client the new configuration d (a change of roots alone). When the
// client cannot take it, the next step replaces the instance.
func (m *Manager) update(rec *record, inst *instance, d desired) {
	r := &secrets.Resolver{LookupEnv: m.hk.lookupEnv, Secrets: m.credentials, Scrubber: secrets.ScrubberOf(m.c)}
	res, err := d.e.resolve(r)
	if err == nil {
		err = inst.scope.Update(res.cfg)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	defer m.dirtyLocked()
	if err != nil {
		inst.noUpdate = true
		m.log.Debug("mcp server update not taken in place; restarting", "server", rec.name, "err", err)
		return
	}
	inst.e, inst.key = d.e, d.key
	rec.lastEntry = d.e
	m.log.Info("mcp server roots updated", "server", rec.name)
}

// dispose disposes inst's scope and records the outcome.
func (m *Manager) dispose(rec *record, inst *instance) {
	dcx, cancel := context.WithTimeout(context.WithoutCancel(m.c), disposeTimeout)
	err := inst.scope.Dispose(dcx)
	timedOut := dcx.Err() != nil
	cancel()

	m.mu.Lock()
	defer m.mu.Unlock()
	rec.inst = nil
	switch {
	case inst.incomplete || errors.Is(err, mcpclient.ErrCleanupIncomplete):
		m.blockLocked(rec, "the process group of the previous instance could not be confirmed gone")
	case timedOut:
		m.blockLocked(rec, fmt.Sprintf("the previous instance did not finish its cleanup within %s", disposeTimeout))
	case err != nil:
		m.log.Warn("mcp server cleanup reported errors", "server", rec.name, "err", inst.scrub.Replace(err.Error()))
	}
	m.closeGoneLocked(inst.owner)
	m.dirtyLocked()
}

// blockLocked marks rec's cleanup incomplete: its name is never mounted again.
func (m *Manager) blockLocked(rec *record, why string) {
	if rec.blocked {
		return
	}
	rec.blocked = true
	rec.blockMsg = why + "; no new instance is started for this server until the host restarts"
	m.log.Error("mcp server cleanup incomplete", "server", rec.name, "err", rec.blockMsg)
}

// closeGoneLocked closes the gone channel of a removed registration once none of its
// instances is left or in flight.
func (m *Manager) closeGoneLocked(reg *registration) {
	if reg == nil || !reg.removed || reg.closed {
		return
	}
	if rec := m.records[reg.e.name]; rec != nil {
		if (rec.inst != nil && rec.inst.owner == reg) || (rec.pending != nil && rec.pending.owner == reg) {
			return
		}
	}
	reg.closed = true
	close(reg.gone)
	delete(m.open, reg)
}

// credentials returns the credentials provider: the secrets.CredentialsKey service if one is
// provided, else the manager's file.
func (m *Manager) credentials() (secrets.Credentials, error) {
	if cr, ok := secrets.CredentialsKey.Get(m.c); ok && cr != nil {
		return cr, nil
	}
	if m.creds == nil {
		return nil, fmt.Errorf("%w: no %s service and no credentials file", secrets.ErrNoCredentials, secrets.CredentialsKey.Name())
	}
	if err := m.creds.Available(); err != nil {
		return nil, err
	}
	return m.creds, nil
}

// ---- client reports -------------------------------------------------------------------

// sink is the manager's mcpclient.StatusSink.
type sink struct{ m *Manager }

// ReportStatus records a client's report. It never blocks on anything but the manager's
// mutex.
func (s sink) ReportStatus(st mcpclient.Status) {
	m := s.m
	if st.Scope == nil || st.Scope.Parent() != m.scope {
		return // a client the manager did not mount
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	inst := m.instanceLocked(st.Server, st.Scope)
	if inst == nil {
		return
	}
	m.applyReportLocked(inst, st)
	m.dirtyLocked()
}

// instanceLocked returns the instance of name running in scope: the mounted one, or the
// one being mounted (its scope is not recorded yet; since a name's instances never
// overlap, a child scope reporting that name is it).
func (m *Manager) instanceLocked(name string, scope *ctx.Scope) *instance {
	rec := m.records[name]
	switch {
	case rec == nil:
		return nil
	case rec.inst != nil && rec.inst.scope == scope:
		return rec.inst
	case rec.pending != nil:
		return rec.pending
	}
	return nil
}

func (m *Manager) applyReportLocked(inst *instance, st mcpclient.Status) {
	st.Tools = slices.Clone(st.Tools)
	inst.report, inst.hasReport = st, true
	if st.Phase == mcpclient.PhaseConnected {
		inst.connectedAt = st.At
		if inst.connectedAt.IsZero() {
			inst.connectedAt = time.Now()
		}
	}
	if st.CleanupIncomplete {
		inst.incomplete = true
		if rec := m.records[inst.e.name]; rec != nil && rec.inst == inst {
			m.blockLocked(rec, "the server's process group could not be confirmed gone")
		}
	}
}

// onScopeStatus follows the state of the client scopes.
func (m *Manager) onScopeStatus(ch ctx.StatusChange) error {
	if ch.Scope.Parent() != m.scope {
		return nil
	}
	var serr error
	if ch.New == ctx.Failed {
		serr = ch.Scope.Err()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, rec := range m.records {
		if inst := rec.inst; inst != nil && inst.scope == ch.Scope {
			m.applyScopeStateLocked(inst, ch.New, serr)
			m.dirtyLocked()
			break
		}
	}
	return nil
}

func (m *Manager) applyScopeStateLocked(inst *instance, st ctx.State, err error) {
	inst.scopeState = st
	switch st {
	case ctx.Failed:
		msg := "the client failed to load"
		if err != nil {
			msg = inst.scrub.Replace(err.Error())
		}
		inst.loadErr = msg
	case ctx.Loading, ctx.Active:
		inst.loadErr = ""
	}
}

// activate waits until the manager's scope is active — from then on clients find the
// status sink — and has the servers mounted. It runs on a goroutine of the scope rather than
// in a StatusChanged listener, so no other plugin's listener can hold the servers back.
func (m *Manager) activate(runcx context.Context) error {
	if err := m.scope.Wait(runcx); err != nil || m.scope.State() != ctx.Active {
		return nil // the load failed, or the scope is unloading
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.active || m.closed {
		return nil
	}
	m.active = true
	m.kickAllLocked()
	return nil
}

// kickAllLocked kicks every name that is defined or has a record, and returns the
// channels of the runs.
func (m *Manager) kickAllLocked() []<-chan struct{} {
	var out []<-chan struct{}
	for _, e := range m.settings {
		m.recordLocked(e.name)
	}
	for _, r := range m.regs {
		m.recordLocked(r.e.name)
	}
	for _, rec := range m.records {
		if ch := m.kickLocked(rec); ch != nil {
			out = append(out, ch)
		}
	}
	return out
}

// stop is the first step of the manager's unload: it refuses new work, cancels probes,
// ends watch streams and has every worker dispose its instance, in parallel, and waits
// for them.
func (m *Manager) stop(dcx context.Context) error {
	m.mu.Lock()
	m.closed = true
	for _, rec := range m.records {
		cancelProbesLocked(rec)
	}
	runs := m.kickAllLocked()
	for w := range m.watchers {
		w.closeLocked(m)
	}
	m.mu.Unlock()
	for _, ch := range runs {
		select {
		case <-ch:
		case <-dcx.Done():
			return fmt.Errorf("mcp manager: waiting for the servers to stop: %w", dcx.Err())
		}
	}
	return nil
}

// finish runs last in the manager's unload, once every worker and probe has returned: it
// releases registrations whose disposers still wait.
func (m *Manager) finish(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for r := range m.open {
		r.removed, r.closed = true, true
		close(r.gone)
		delete(m.open, r)
	}
	return nil
}
