package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/redact"
	"github.com/cordisgo/harness/mcpauth"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/secrets"
)

// Supervisor timing that is not configurable.
const (
	// closeTimeout bounds the graceful part of closing a generation (the SDK's close, an HTTP
	// DELETE); a stdio process group is then terminated and killed within fixed bounds
	// whatever happens (see connection.Close).
	closeTimeout = 5 * time.Second
	// refreshQuiet is how long the refresher waits for tools/list_changed notifications to
	// stop before it re-lists, and refreshMaxDelay bounds that wait, so a storm of
	// notifications costs one or two listings and a steady stream cannot starve them.
	refreshQuiet    = 20 * time.Millisecond
	refreshMaxDelay = 250 * time.Millisecond
)

// ErrUnavailable is matched (errors.Is) by the error of a tool call or resource request made
// while the server has no live connection: connecting, reconnecting, failed or shut down. The
// message says which, for example `mcp server "gh" is reconnecting (attempt 2 of 10)`.
var ErrUnavailable = errors.New("mcp server unavailable")

// unavailableError is an ErrUnavailable with a precise message and, when a request failed,
// its cause. It is immutable.
type unavailableError struct {
	msg   string
	cause error
}

func (e *unavailableError) Error() string        { return e.msg }
func (e *unavailableError) Is(target error) bool { return target == ErrUnavailable }
func (e *unavailableError) Unwrap() error        { return e.cause }

// dialFunc connects one generation; dial in production.
type dialFunc func(cx context.Context, cfg Config, opts dialOptions) (*connection, error)

// hooks are the package's test seams. Tests mount the plugin on a context carrying them
// (ctx.Context.With(hooksKey{}, &hooks{...})); production code never sets them, so the
// production path is dial. Backoff and the stability window read the real clock; tests
// drive them with testing/synctest.
type hooks struct {
	dial dialFunc
	// tune adjusts the dial options (shorter kill grace periods, …).
	tune func(*dialOptions)
	// observe receives each supervisor created.
	observe func(*supervisor)
	// jitter replaces the random spread of reconnect delays (identity: none).
	jitter func(time.Duration) time.Duration
}

type hooksKey struct{}

// generation is one connection: one SDK session over one transport (the SDK binds a session
// to its transport for life), plus the signals the supervisor waits on.
type generation struct {
	conn    *connection
	changed chan struct{} // tools/list_changed, coalesced: one queued at most
	lost    chan struct{} // closed once a call saw the session gone
	once    sync.Once
	lostErr error // written before lost is closed

	// life ends when the generation is being closed: requests in flight are cancelled
	// then (the SDK's close would otherwise wait for them), which also tells the server.
	life context.Context
	end  context.CancelFunc

	// Tool calls in flight, cancelled through toolregistry.Call.Cancel when life ends: no
	// context per call (other requests use bind).
	callsMu sync.Mutex
	calls   map[*toolregistry.Call]struct{} // nil once life has ended

	// watch ends requests that go toolCallTimeoutMs without progress (progress.go).
	watch watchdog

	// client is the SDK client of the session, kept when it has roots to update.
	client atomic.Pointer[mcp.Client]
	// offered is what the session declared it answers (set before the handshake);
	// renegotiate is signalled when the client would now declare more (serverreq.go).
	offered     offer
	renegotiate chan struct{}

	// tasks is what the server's tasks capability allows (set after the handshake); recv
	// are the tasks the session runs for the server (taskrecv.go); taskCallers the callers
	// of the tasks it created, by task ID (tasks.go).
	tasks       serverTasks
	recv        recvTasks
	tasksMu     sync.Mutex
	taskCallers map[string]context.Context
	// acks hands subscriptions/listen acknowledgements to subscribes (subscribe.go).
	acks ackWaiters
}

// errGenerationClosed is the cause a tool call in flight is cancelled with when its
// connection closes.
var errGenerationClosed = errors.New("mcpclient: the connection closed during the call")

func newGeneration() *generation {
	lifecx, end := context.WithCancel(context.Background())
	g := &generation{changed: make(chan struct{}, 1), lost: make(chan struct{}), life: lifecx, end: end,
		calls: make(map[*toolregistry.Call]struct{}), renegotiate: make(chan struct{}, 1)}
	context.AfterFunc(lifecx, g.cancelCalls)
	return g
}

// track records a tool call in flight on g; false when g's life has already ended.
func (g *generation) track(call *toolregistry.Call) bool {
	g.callsMu.Lock()
	defer g.callsMu.Unlock()
	if g.calls == nil {
		return false
	}
	g.calls[call] = struct{}{}
	return true
}

// untrack forgets a call track recorded.
func (g *generation) untrack(call *toolregistry.Call) {
	g.callsMu.Lock()
	delete(g.calls, call)
	g.callsMu.Unlock()
}

// cancelCalls ends the tool calls in flight; it runs once, when life ends. It cancels them
// holding callsMu, so that a call's untrack returns only once no Cancel is still to come: a
// Call must not be cancelled after its call returned (the registry reuses it).
func (g *generation) cancelCalls() {
	g.callsMu.Lock()
	defer g.callsMu.Unlock()
	for call := range g.calls {
		call.Cancel(errGenerationClosed)
	}
	g.calls = nil
}

// bind returns a context for one request on g: cancelled with parent, or when g closes.
func (g *generation) bind(pcx context.Context) (context.Context, func()) {
	cx, cancel := context.WithCancel(pcx)
	stop := context.AfterFunc(g.life, cancel)
	return cx, func() {
		stop()
		cancel()
	}
}

// signalChanged is the tools/list_changed handler: it runs on the SDK's notification
// goroutine and only signals.
func (g *generation) signalChanged() {
	select {
	case g.changed <- struct{}{}:
	default:
	}
}

// signalRenegotiate asks the supervisor to reconnect g once no request is in flight on it.
func (g *generation) signalRenegotiate() {
	select {
	case g.renegotiate <- struct{}{}:
	default:
	}
}

// errRenegotiate ends a generation that declared less than the client now answers: the
// supervisor connects again at once, without counting a failure.
var errRenegotiate = errors.New("mcpclient: reconnecting to declare what the client now answers")

// markLost reports that a request found the session gone (the server forgot it, or the
// connection closed under it).
func (g *generation) markLost(err error) {
	g.once.Do(func() {
		g.lostErr = err
		close(g.lost)
	})
}

// sessionGone reports whether err from a request means the session cannot serve again: the
// server answered 404 for it (a restarted HTTP server), the connection is closed, or the
// stream ended under the request (io.EOF: a stdio server that died mid-call).
func sessionGone(err error) bool {
	return errors.Is(err, mcp.ErrSessionMissing) || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF)
}

// supervisor owns one server's connection for the lifetime of a client scope: it connects,
// publishes tools and instructions, refreshes on tools/list_changed, reconnects with backoff,
// and reports status. Its loop runs on one goroutine (run); calls read the live generation
// with one atomic load.
type supervisor struct {
	c      *ctx.Context // the client's activation
	cfg    Config
	set    *toolregistry.Set
	log    *slog.Logger
	jitter func(time.Duration) time.Duration // spreads reconnect delays (spread)
	dial   dialFunc
	opts   dialOptions
	scrub  *secrets.Scrubber // masks configured secrets in reported text
	// auth authorizes an HTTP server's requests (nil: none); authErr is why it could not
	// be built (the entry then fails at connect).
	auth    *mcpauth.Authorizer
	authErr error

	ready     chan struct{} // closed after the first attempt
	readyOnce sync.Once
	startErr  error // the first attempt's error; written before ready is closed

	cat  *catalogCache // the catalog cache entry kept current (catalog.go); nil without one
	lazy *lazyRunner   // starts and stops a lazy server's runs (lazy.go); nil when eager

	live atomic.Pointer[generation] // nil while not connected
	// renewing is closed when a renegotiation's new connection is live (or failed); calls
	// made meanwhile wait for it (liveGeneration). nil when none is under way.
	renewing atomic.Pointer[chan struct{}]
	tokens   atomic.Uint64            // the last progress token issued (newToken)
	roots    atomic.Pointer[[]string] // the roots' file:// URIs (nil: none configured)
	subs     subscriptions            // resource subscriptions by URI (subscribe.go)
	// upstream is the client's Upstream (publishUpstream), for the notices the client
	// makes itself (a task's status as progress).
	upstream *Upstream

	mu       sync.Mutex
	state    Status                     // guarded by mu: the last report
	instr    string                     // guarded by mu: published attributed instructions
	rawInstr string                     // guarded by mu: the server's instructions as it sent them (or the cache had them)
	watchers map[*func(string)]struct{} // guarded by mu: instruction observers
}

func newSupervisor(c *ctx.Context, cfg Config, set *toolregistry.Set) *supervisor {
	s := &supervisor{
		c:        c,
		cfg:      cfg,
		set:      set,
		log:      c.Logger().With("server", cfg.ServerName),
		jitter:   spread,
		dial:     dial,
		scrub:    secretScrubber(cfg),
		ready:    make(chan struct{}),
		watchers: make(map[*func(string)]struct{}),
	}
	addHostSecrets(secrets.ScrubberOf(c), cfg)
	s.opts.logger = s.log
	if h, ok := c.Value(hooksKey{}).(*hooks); ok && h != nil {
		if h.dial != nil {
			s.dial = h.dial
		}
		if h.jitter != nil {
			s.jitter = h.jitter
		}
		if h.tune != nil {
			h.tune(&s.opts)
		}
		if h.observe != nil {
			h.observe(s)
		}
	}
	if cfg.UsesOAuth() {
		if s.opts.authOpenURL == nil {
			s.opts.authOpenURL = s.openAuthorization
		}
		if s.opts.authStepUp == nil {
			s.opts.authStepUp = s.personHere
		}
		if h := secrets.ScrubberOf(c); h != nil && s.opts.authSensitive == nil {
			s.opts.authSensitive = h.AddSecret
		}
		s.auth, s.authErr = newAuthorizer(cfg, s.opts)
		s.opts.auth = s.auth
	}
	return s
}

// defaultNeedsAuthRecheck is how often a client waiting for a login re-reads the
// credentials store and tries again, for logins stored by another process: one
// unauthenticated request per half minute costs the server nothing, and a login done with
// `mcp login --local` is picked up while the user is still looking.
const defaultNeedsAuthRecheck = 30 * time.Second

func (s *supervisor) needsAuthRecheck() time.Duration {
	if s.opts.authRecheck > 0 {
		return s.opts.authRecheck
	}
	return defaultNeedsAuthRecheck
}

// authChanged returns the channel closed at the next stored login for this server (nil,
// never closed, without an authorizer).
func (s *supervisor) authChanged() <-chan struct{} {
	if s.auth == nil {
		return nil
	}
	return s.auth.Changed()
}

// maxAttempts is the reconnect budget reported in status (0 when reconnection is off).
func (s *supervisor) maxAttempts() int {
	if !s.cfg.Reconnect.Enabled {
		return 0
	}
	return s.cfg.Reconnect.MaxAttempts
}

// backoff returns the delay before retry n (1-based): initialDelay doubling, capped at
// maxDelay, then spread by the jitter.
func (s *supervisor) backoff(n int) time.Duration {
	d, ceiling := s.cfg.Reconnect.InitialDelay(), s.cfg.Reconnect.MaxDelay()
	for i := 1; i < n && d < ceiling; i++ {
		d *= 2
	}
	return min(s.jitter(min(d, ceiling)), ceiling)
}

// spread returns a random delay between 80 % and 120 % of d, so that clients that lost their
// servers together (one host's twenty servers after a sleep, many hosts after a remote
// server's restart) do not all come back in the same instant.
func spread(d time.Duration) time.Duration {
	return d*4/5 + rand.N(d*2/5+1)
}

// run is the supervisor loop, the body of the client's goroutine. It returns when the
// client's scope unloads, after closing the live generation and reporting "disposed".
func (s *supervisor) run(runcx context.Context) error {
	failures := 0 // consecutive failed attempts in the current outage
	startup := true
	s.report(Status{Phase: PhaseConnecting})
	for {
		loggedIn := s.authChanged() // before the attempt, so no login is missed
		g, tools, err := s.connect(runcx)
		connectedAt := time.Now()
		if err == nil && runcx.Err() == nil {
			err = s.publish(g, tools, startup)
			if err != nil {
				if cerr := s.closeGeneration(g); cerr != nil {
					err = errors.Join(err, cerr)
				}
				g = nil
			} else {
				s.resubscribe(runcx, g)
				if !g.offered.covers(s.wanted()) { // a responder came during the handshake
					g.signalRenegotiate()
				}
			}
		}
		s.endRenewal()
		needsAuth := err != nil && s.auth != nil && errors.Is(err, mcpauth.ErrNeedsAuth)
		if needsAuth && runcx.Err() == nil {
			// Reported before the first attempt counts as done, so a startup display
			// already shows it.
			s.withdraw()
			msg := err.Error()
			if na, ok := errors.AsType[*mcpauth.NeedsAuthError](err); ok {
				msg = na.Error() // the hint, without the transport's wrapping
			}
			s.mu.Lock()
			same := s.state.Phase == PhaseNeedsAuth && s.state.Err == msg
			s.mu.Unlock()
			if !same { // a periodic re-check that finds no login says nothing new
				s.report(Status{Phase: PhaseNeedsAuth, Err: msg, AuthHint: s.cfg.loginCommand()})
			}
		}
		if startup {
			startup = false
			s.attempted(err)
			if err != nil && s.cfg.FailOnStartupError {
				// apply fails the scope with this error, which unloads everything.
				s.report(Status{Phase: PhaseFailed, StderrTail: stderrOf(err), Err: err.Error()})
				return s.parked(runcx)
			}
		}
		if runcx.Err() != nil {
			var cerr error
			if g != nil {
				cerr = s.closeGeneration(g)
			}
			return s.disposed(cerr)
		}

		lost, tail := false, stderrOf(err)
		if err == nil {
			cause := s.serve(runcx, g)
			renew := errors.Is(cause, errRenegotiate)
			if renew {
				s.beginRenewal()
			}
			s.live.Store(nil)
			cerr := s.closeGeneration(g)
			if runcx.Err() != nil {
				return s.disposed(cerr)
			}
			if renew && cerr == nil {
				s.log.Info("mcp server reconnecting to declare what the client now answers", StatusLogKey, true, "offers", s.wanted().String())
				s.report(Status{Phase: PhaseConnecting})
				continue
			}
			s.endRenewal()
			s.log.Warn("mcp server connection lost", StatusLogKey, true, "err", s.scrubErr(cause))
			if cerr != nil {
				err = cerr
			} else {
				err = cause
			}
			lost, tail = true, g.conn.StderrTail()
			if time.Since(connectedAt) >= s.cfg.Reconnect.MaxDelay() {
				failures = 0 // the connection survived the stability window: a new outage
			}
		}
		if errors.Is(err, ErrCleanupIncomplete) {
			// The old process group may still run: starting another would make two servers
			// of one entry overlap. Only a reload recovers.
			s.withdraw()
			s.report(Status{Phase: PhaseFailed, CleanupIncomplete: true, StderrTail: tail,
				Err: fmt.Sprintf("%v — reconnection stopped so that two server processes never overlap; reload the plugin to retry", err)})
			return s.parked(runcx)
		}
		if needsAuth {
			// Not a failure: the server waits for a login. No budget is spent; a login
			// stored by this process (mcp login through the host) wakes it at once, and one
			// stored by another process (mcp login --local) is found at the next re-check.
			recheck := time.NewTimer(s.needsAuthRecheck())
			select {
			case <-loggedIn:
				recheck.Stop()
				s.report(Status{Phase: PhaseConnecting})
			case <-recheck.C:
				s.auth.Reload()
			case <-runcx.Done():
				recheck.Stop()
				return s.disposed(nil)
			}
			failures = 0
			continue
		}
		if !lost && permanent(err) {
			// Retrying cannot help (an executable that does not exist, a URL that cannot be
			// dialled): say so at once instead of after every retry's backoff.
			s.withdraw()
			s.report(Status{Phase: PhaseFailed, StderrTail: tail,
				Err: fmt.Sprintf("%v — it cannot start this way, so it is not retried: fix the configuration, then restart the server", err)})
			return s.parked(runcx)
		}
		if !s.cfg.Reconnect.Enabled {
			msg := "connection failed and reconnect is disabled — reload the plugin to connect"
			if lost {
				msg = "connection lost and reconnect is disabled — its tools fail until the plugin is reloaded"
			}
			s.report(Status{Phase: PhaseFailed, StderrTail: tail, Err: fmt.Sprintf("%s: %v", msg, err)})
			return s.parked(runcx)
		}
		failures++
		if max := s.cfg.Reconnect.MaxAttempts; failures > max {
			s.withdraw()
			s.report(Status{Phase: PhaseFailed, Attempt: max, StderrTail: tail,
				Err: fmt.Sprintf("giving up after %d consecutive failed reconnect attempts — tools unregistered; reload the plugin to reconnect: %v", max, err)})
			return s.parked(runcx)
		}
		delay := s.backoff(failures)
		s.report(Status{Phase: PhaseReconnecting, Attempt: failures, StderrTail: tail, Err: err.Error()})
		s.log.Info("mcp server reconnecting", StatusLogKey, true, "attempt", failures, "max_attempts", s.cfg.Reconnect.MaxAttempts, "delay", delay)
		wait := time.NewTimer(delay)
		select {
		case <-wait.C:
		case <-runcx.Done():
			wait.Stop()
			return s.disposed(nil)
		}
	}
}

// beginRenewal makes calls wait for the connection a renegotiation makes.
func (s *supervisor) beginRenewal() {
	ch := make(chan struct{})
	s.renewing.Store(&ch)
}

// endRenewal lets the calls waiting for a renegotiation go on.
func (s *supervisor) endRenewal() {
	if ch := s.renewing.Swap(nil); ch != nil {
		close(*ch)
	}
}

// parked waits for the scope to unload after the supervisor stopped for good.
func (s *supervisor) parked(runcx context.Context) error {
	<-runcx.Done()
	return s.disposed(nil)
}

// disposed reports the end of the supervisor.
func (s *supervisor) disposed(closeErr error) error {
	s.live.Store(nil)
	s.endRenewal()
	st := s.stoppedStatus()
	if closeErr != nil {
		st.Err = closeErr.Error()
		st.CleanupIncomplete = errors.Is(closeErr, ErrCleanupIncomplete)
	}
	s.report(st)
	return nil
}

// connect dials one generation and lists its tools, within startupTimeoutMs. On failure
// nothing of the generation is left (or the error wraps ErrCleanupIncomplete).
func (s *supervisor) connect(runcx context.Context) (*generation, []toolregistry.Tool, error) {
	timeout := s.cfg.StartupTimeout()
	cx, cancel := context.WithTimeoutCause(runcx, timeout,
		fmt.Errorf("startup timed out after %v (startupTimeoutMs)", timeout))
	defer cancel()
	if s.authErr != nil {
		return nil, nil, connectError(s.cfg.ServerName, fmt.Errorf("oauth: %w", s.authErr), "")
	}
	g := newGeneration()
	opts := s.opts
	opts.onToolListChanged = g.signalChanged
	s.protocolOptions(g, &opts)
	conn, err := s.dial(cx, s.cfg, opts)
	if err != nil {
		return nil, nil, s.timeoutCause(cx, runcx, err)
	}
	g.conn = conn
	g.tasks = parseServerTasks(conn.Session().InitializeResult())
	s.connected(cx, g)
	tools, err := s.discover(cx, g)
	if err != nil {
		err = s.timeoutCause(cx, runcx, err)
		if cerr := s.closeGeneration(g); cerr != nil {
			err = errors.Join(err, cerr)
		}
		return nil, nil, err
	}
	return g, tools, nil
}

// timeoutCause makes a startup timeout explicit in err.
func (s *supervisor) timeoutCause(cx, runcx context.Context, err error) error {
	if cx.Err() != nil && runcx.Err() == nil && !errors.Is(err, context.Cause(cx)) {
		return fmt.Errorf("%w: %w", context.Cause(cx), err)
	}
	return err
}

// publish makes g the live generation: its tools replace the previous ones in one swap, its
// instructions are published, and "connected" is reported. A registration failure fails the
// attempt at a strict startup (failOnStartupError); otherwise it is reported and the
// connection is kept with whatever tools were registered before.
func (s *supervisor) publish(g *generation, tools []toolregistry.Tool, startup bool) error {
	var regErr error
	s.live.Store(g) // before the tools appear, so that they are callable at once
	if err := s.set.Replace(tools); err != nil {
		if startup && s.cfg.FailOnStartupError {
			s.live.Store(nil)
			return fmt.Errorf("mcp server %q: tool registration failed: %w", s.cfg.ServerName, err)
		}
		s.log.Error("tool registration failed; keeping the previous tools", "err", s.scrubErr(err))
		regErr = err
	}
	s.setInstructions(g.conn.Info().Instructions)
	st := s.connectedStatus(g)
	if regErr != nil {
		st.Err = "tool registration failed: " + regErr.Error()
	}
	s.report(st)
	s.catalogChanged()
	if u := s.upstream; u != nil {
		u.notify(Notice{Kind: NoticeConnected})
	}
	return nil
}

func (s *supervisor) connectedStatus(g *generation) Status {
	info := g.conn.Info()
	s.mu.Lock()
	instr := len(s.instr)
	s.mu.Unlock()
	return Status{
		Phase:             PhaseConnected,
		Transport:         g.conn.Transport(),
		ServerName:        info.ServerName,
		ServerVersion:     info.ServerVersion,
		ServerDescription: info.ServerDescription,
		ProtocolVersion:   info.ProtocolVersion,
		Tools:             s.set.Names(),
		InstructionBytes:  instr,
		StderrTail:        g.conn.StderrTail(),
	}
}

// serve waits while g is live, refreshing its tools on tools/list_changed, and returns why
// it ended (nil when runCtx ended).
func (s *supervisor) serve(runcx context.Context, g *generation) error {
	var quiet <-chan struct{} // set while a renegotiation waits for the requests in flight
	for {
		select {
		case <-runcx.Done():
			return nil
		case <-g.conn.Done():
			return fmt.Errorf("mcp server %q closed the connection", s.cfg.ServerName)
		case <-g.lost:
			return g.lostErr
		case <-g.changed:
			if s.settle(runcx, g) {
				s.refresh(runcx, g)
			}
		case <-g.renegotiate:
			if !g.offered.covers(s.wanted()) {
				quiet = g.watch.quietCh()
			}
		case <-quiet:
			if !g.offered.covers(s.wanted()) {
				return errRenegotiate
			}
			quiet = nil
		}
	}
}

// settle waits until tools/list_changed notifications pause for refreshQuiet (at most
// refreshMaxDelay), so that a burst costs one listing. It reports false when g stopped
// being worth refreshing meanwhile.
func (s *supervisor) settle(runcx context.Context, g *generation) bool {
	quiet := time.NewTimer(refreshQuiet)
	defer quiet.Stop()
	ceiling := time.NewTimer(refreshMaxDelay)
	defer ceiling.Stop()
	for {
		select {
		case <-g.changed:
			quiet.Reset(refreshQuiet)
		case <-quiet.C:
			return true
		case <-ceiling.C:
			return true
		case <-runcx.Done():
			return false
		case <-g.conn.Done():
			return false
		case <-g.lost:
			return false
		}
	}
}

// refresh re-lists g's tools and swaps them in. A failed listing (or a rejected one) keeps
// the previous tools.
func (s *supervisor) refresh(runcx context.Context, g *generation) {
	cx, cancel := context.WithTimeout(runcx, s.cfg.ToolCallTimeout())
	defer cancel()
	before := s.set.Names()
	tools, err := s.discover(cx, g)
	if err != nil {
		if runcx.Err() != nil {
			return
		}
		if sessionGone(err) {
			g.markLost(err)
		}
		s.log.Warn("tool re-sync failed; keeping the previous tools", "err", s.scrubErr(err))
		return
	}
	if err := s.set.Replace(tools); err != nil {
		s.log.Error("tool re-sync: registration failed; keeping the previous tools", "err", s.scrubErr(err))
		return
	}
	if !slices.Equal(before, s.set.Names()) {
		s.report(s.connectedStatus(g))
	}
	s.catalogChanged()
}

// closeGeneration closes g's connection: the barrier before any new generation starts.
func (s *supervisor) closeGeneration(g *generation) error {
	g.end()
	g.watch.stop()
	cx, cancel := context.WithTimeout(context.WithoutCancel(s.c), closeTimeout)
	defer cancel()
	return g.conn.Close(cx)
}

// unavailable is the fail-fast error of a request made with no live generation.
func (s *supervisor) unavailable() error {
	s.mu.Lock()
	st := s.state
	s.mu.Unlock()
	name := s.cfg.ServerName
	var msg string
	switch st.Phase {
	case PhaseReconnecting:
		msg = fmt.Sprintf("mcp server %q is reconnecting (attempt %d of %d)", name, st.Attempt, st.MaxAttempts)
		if st.Err != "" {
			msg += "; last error: " + st.Err
		}
	case PhaseConnecting:
		msg = fmt.Sprintf("mcp server %q is connecting", name)
	case PhaseNeedsAuth:
		msg = fmt.Sprintf("mcp server %q needs authorization: run `%s`", name, st.AuthHint)
	case PhaseConnected:
		msg = fmt.Sprintf("mcp server %q lost its connection and is reconnecting", name)
	case PhaseFailed:
		msg = fmt.Sprintf("mcp server %q is unavailable: %s", name, st.Err)
	default:
		msg = fmt.Sprintf("mcp server %q is shut down", name)
	}
	return &unavailableError{msg: msg}
}

// report records st as the current status and hands it to the status sink, if one is
// mounted, then to the StatusEvent listeners. A failing sink or listener is logged and never
// disturbs the supervisor.
func (s *supervisor) report(st Status) {
	st.Server = s.cfg.ServerName
	st.Scope = s.c.Scope()
	st.At = time.Now()
	if st.MaxAttempts == 0 && (st.Phase == PhaseReconnecting || st.Attempt > 0) {
		st.MaxAttempts = s.maxAttempts()
	}
	st.Err = s.scrub.Replace(st.Err)
	st.StderrTail = s.scrub.Replace(st.StderrTail)
	s.mu.Lock()
	s.state = st
	s.mu.Unlock()

	level := slog.LevelInfo
	switch st.Phase {
	case PhaseReconnecting, PhaseNeedsAuth:
		level = slog.LevelWarn
	case PhaseFailed:
		level = slog.LevelError
	case PhaseConnecting, PhaseDisposed:
		level = slog.LevelDebug
	}
	s.log.Log(context.Background(), level, "mcp server "+string(st.Phase), StatusLogKey, true,
		"attempt", st.Attempt, "max_attempts", st.MaxAttempts, "tools", len(st.Tools), "err", st.Err)

	if sink, ok := StatusSinkKey.Get(s.c); ok && sink != nil {
		if err := ctx.Safely(func() error { sink.ReportStatus(st); return nil }); err != nil {
			s.log.Warn("status sink failed while reporting", "phase", st.Phase, "err", err)
		}
	}
	if err := StatusEvent.Emit(s.c, st); err != nil {
		s.log.Warn("status listener failed", "phase", st.Phase, "err", err)
	}
}

// setInstructions keeps the server's instructions (raw, as the server sent them) and
// publishes them attributed to the observers (the prompt section), if they changed.
func (s *supervisor) setInstructions(raw string) {
	text := attributedInstructions(s.cfg.ServerName, raw, s.cfg.MaxInstructionBytes)
	s.mu.Lock()
	s.rawInstr = raw
	if s.instr == text {
		s.mu.Unlock()
		return
	}
	s.instr = text
	fns := callbacks(s.watchers)
	s.mu.Unlock()
	for _, fn := range fns {
		fn(text)
	}
}

// rawInstructions returns the server's instructions as it sent them.
func (s *supervisor) rawInstructions() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rawInstr
}

// instructions returns the published attributed instructions.
func (s *supervisor) instructions() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.instr
}

// callbacks returns the functions of a set of observers, to be called once the lock that
// guards the set is released (an observer may add or remove observers).
func callbacks[T any](set map[*func(T)]struct{}) []func(T) {
	fns := make([]func(T), 0, len(set))
	for p := range set {
		fns = append(fns, *p)
	}
	return fns
}

// watchInstructions calls fn after every change of the instructions, until the returned
// function is called; current is the text when the watch started.
func (s *supervisor) watchInstructions(fn func(string)) (current string, stop func()) {
	p := &fn
	s.mu.Lock()
	s.watchers[p] = struct{}{}
	current = s.instr
	s.mu.Unlock()
	return current, func() {
		s.mu.Lock()
		delete(s.watchers, p)
		s.mu.Unlock()
	}
}

// scrubErr returns err's text with configured secrets masked, for logging.
func (s *supervisor) scrubErr(err error) string {
	if err == nil {
		return ""
	}
	return s.scrub.Replace(err.Error())
}

// secretScrubber masks configured secret values (header values, secret-looking env values,
// URL passwords and query values, the substituted secrets, OAuth client secrets) in text
// that is shown in status or probe results. The supervisor adds them to the host's
// scrubber too ([secrets.ScrubberKey]).
func secretScrubber(cfg Config) *secrets.Scrubber {
	s := new(secrets.Scrubber)
	for _, v := range cfg.Headers {
		s.AddSecret(v)
	}
	for k, v := range cfg.Env {
		if secretName(k) {
			s.AddSecret(v)
		}
	}
	for _, v := range urlSecrets(cfg.URL) {
		s.AddSecret(v)
	}
	for _, v := range cfg.Secrets {
		s.AddSecret(v)
	}
	for _, v := range cfg.OAuth.secrets() {
		s.AddSecret(v)
	}
	return s
}

// addHostSecrets adds to the host's scrubber the values of cfg that are secrets wherever
// they show up (a tool's result, the agent's session log): the values of env variables and
// headers with secret-looking names (Authorization, X-Api-Key, GITHUB_TOKEN), a URL's
// password and its query values with such names, the OAuth client secrets. Values
// substituted from references reach it through the resolver ([secrets.Resolver.Scrubber]);
// other configured values (a path, a flag) are masked only in the client's own reports.
func addHostSecrets(h *secrets.Scrubber, cfg Config) {
	if h == nil {
		return
	}
	for k, v := range cfg.Headers {
		if secretName(k) {
			h.AddSecret(v)
		}
	}
	for k, v := range cfg.Env {
		if secretName(k) {
			h.AddSecret(v)
		}
	}
	if u, err := url.Parse(cfg.URL); err == nil && u != nil {
		if p, ok := u.User.Password(); ok {
			h.AddSecret(p)
		}
		for k, vs := range u.Query() {
			if secretName(k) {
				for _, v := range vs {
					h.AddSecret(v)
				}
			}
		}
	}
	for _, v := range cfg.OAuth.secrets() {
		h.AddSecret(v)
	}
}

// secretName reports whether an environment variable name looks like it holds a secret
// (the module's one rule, [redact.SecretName]).
func secretName(name string) bool { return redact.SecretName(name) }

// urlSecrets returns the password and the query values of raw, which may be credentials.
func urlSecrets(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil || u == nil {
		return nil
	}
	var out []string
	if u.User != nil {
		if p, ok := u.User.Password(); ok {
			out = append(out, p)
		}
	}
	for _, vs := range u.Query() {
		out = append(out, vs...)
	}
	return out
}
