package mcpclient

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient/catalog"
)

// lazyRunner starts and stops the supervisor of a lazy server (startup: lazy): a run of the
// supervisor loop is started by the first call that needs the server, and stopped by the
// idle worker once no call has needed it for the idle timeout. Calls wait for the start's
// first attempt. Runs never overlap: a new one starts only after the previous one returned
// (its connection closed). It is safe for concurrent use.
type lazyRunner struct {
	s     *supervisor
	c     *ctx.Context // the client's activation, which owns the runs
	idle  time.Duration
	idler *ctx.Worker

	mu       sync.Mutex
	run      ctx.Disposer  // the current run; nil while stopped
	start    *startSignal  // the current run's first attempt
	busy     int           // calls holding the server
	last     time.Time     // when the server was last needed (a call ended, a run started)
	stopping chan struct{} // closed when the stop in progress has finished; nil if none
}

// startSignal is closed once a run's first connection attempt is over; err is its error.
type startSignal struct {
	done chan struct{}
	err  error // written before done is closed
}

// failed reports whether the first attempt is over and failed.
func (sig *startSignal) failed() bool {
	select {
	case <-sig.done:
		return sig.err != nil
	default:
		return false
	}
}

// newLazyRunner makes the runner of s, with its idle worker in c.
func newLazyRunner(c *ctx.Context, s *supervisor, idle time.Duration) (*lazyRunner, error) {
	l := &lazyRunner{s: s, c: c, idle: idle}
	w, _, err := c.NewWorker("mcpclient:idle:"+s.cfg.ServerName, l.watchIdle)
	if err != nil {
		return nil, err
	}
	l.idler = w
	return l, nil
}

// becomeLazy makes s a lazy server's supervisor: its runs are started by calls and stopped
// by the idle worker, and the client reports disposed when it unloads whether or not a run
// is in progress then.
func (s *supervisor) becomeLazy(c *ctx.Context, idle time.Duration) error {
	// Registered before any run, so it runs after them (effects unwind newest first).
	if _, err := c.Defer("mcpclient:lazy", func(context.Context) error {
		if s.phase() != PhaseDisposed {
			s.report(Status{Phase: PhaseDisposed})
		}
		return nil
	}); err != nil {
		return err
	}
	l, err := newLazyRunner(c, s, idle)
	if err != nil {
		return err
	}
	s.lazy = l
	return nil
}

// startLocked starts a run. Callers hold l.mu, with no run and no stop in progress.
func (l *lazyRunner) startLocked() *startSignal {
	sig := &startSignal{done: make(chan struct{})}
	l.start = sig
	l.last = time.Now()
	d, err := l.c.Go("mcpclient:"+l.s.cfg.ServerName, l.s.run)
	if err != nil { // the client is unloading
		sig.err = fmt.Errorf("mcp server %q is shut down: %w", l.s.cfg.ServerName, err)
		close(sig.done)
		return sig
	}
	l.run = d
	return sig
}

// attempted is told the outcome of the current run's first attempt (from the run).
func (l *lazyRunner) attempted(err error) {
	l.mu.Lock()
	sig := l.start
	l.last = time.Now()
	l.mu.Unlock()
	if sig != nil {
		sig.err = err
		close(sig.done)
	}
	l.idler.Kick()
}

// acquire holds the server for one request made with cx: it starts the server when it is
// not running (or its last run gave up), waits for the start's first attempt, and returns
// the function that releases the hold. A start that failed is the error, naming the server.
func (l *lazyRunner) acquire(cx context.Context) (release func(), err error) {
	l.mu.Lock()
	l.busy++
	l.mu.Unlock()
	release = l.release
	for {
		l.mu.Lock()
		if wait := l.stopping; wait != nil {
			l.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-cx.Done():
				release()
				return nil, context.Cause(cx)
			}
		}
		if l.run != nil && l.s.live.Load() == nil && (l.start.failed() || l.s.phase() == PhaseFailed) {
			// The run's start failed (it may be retrying in the background), or it stopped
			// for good (a permanent failure, the budget spent): a new call is a new start.
			l.mu.Unlock()
			l.stop(cx, false)
			continue
		}
		sig := l.start
		if l.run == nil {
			sig = l.startLocked()
		}
		l.mu.Unlock()
		select {
		case <-sig.done:
		case <-cx.Done():
			release()
			return nil, context.Cause(cx)
		}
		if sig.err != nil && l.s.live.Load() == nil {
			release()
			return nil, &unavailableError{
				msg:   fmt.Sprintf("mcp server %q (startup: lazy) failed to start: %v", l.s.cfg.ServerName, l.s.scrubErr(sig.err)),
				cause: sig.err,
			}
		}
		return release, nil
	}
}

// release ends one hold taken by acquire.
func (l *lazyRunner) release() {
	l.mu.Lock()
	l.busy--
	l.last = time.Now()
	idle := l.busy == 0
	l.mu.Unlock()
	if idle {
		l.idler.Kick()
	}
}

// watchIdle is the idle worker's run: while the server runs unneeded, it waits until the
// idle timeout has passed since it was last needed, then stops it. A call that arrives
// meanwhile takes the server again (the stop checks under the lock).
func (l *lazyRunner) watchIdle(runcx context.Context) error {
	for {
		l.mu.Lock()
		if l.run == nil || l.stopping != nil || l.busy > 0 {
			l.mu.Unlock()
			return nil
		}
		wait := l.idle - time.Since(l.last)
		l.mu.Unlock()
		if wait <= 0 {
			l.stop(runcx, true)
			return nil
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-runcx.Done():
			t.Stop()
			return nil
		}
	}
}

// stop ends the current run and waits until its connection is closed. An idle stop
// happens only while no call holds the server and the idle timeout has passed; it is
// reported as [PhaseIdle] and keeps the tools registered.
func (l *lazyRunner) stop(cx context.Context, idle bool) {
	l.mu.Lock()
	if l.run == nil || l.stopping != nil || (idle && (l.busy > 0 || time.Since(l.last) < l.idle)) {
		l.mu.Unlock()
		return
	}
	run, done := l.run, make(chan struct{})
	l.stopping = done
	l.mu.Unlock()
	if idle {
		l.s.log.Debug("stopping the idle lazy server", "idle", l.idle)
	}
	err := run(cx)
	l.mu.Lock()
	l.run, l.start, l.stopping = nil, nil, nil
	l.mu.Unlock()
	close(done)
	if err != nil && l.c.Err() == nil {
		l.s.log.Warn("stopping the lazy server failed", "err", l.s.scrubErr(err))
	}
}

// phase returns the phase last reported.
func (s *supervisor) phase() Phase {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.Phase
}

// acquire holds a lazy server for one request made with cx (starting it if need be); for
// an eager server it does nothing.
func (s *supervisor) acquire(cx context.Context) (func(), error) {
	if s.lazy == nil {
		return func() {}, nil
	}
	return s.lazy.acquire(cx)
}

// liveGeneration acquires the server for a request (starting a lazy one) and returns its
// live generation, with the release to call once the request is done; with no live
// generation it releases at once and fails with the client's unavailable error.
func (s *supervisor) liveGeneration(cx context.Context) (*generation, func(), error) {
	release, err := s.acquire(cx)
	if err != nil {
		return nil, nil, err
	}
	g := s.live.Load()
	if g == nil {
		if ch := s.renewing.Load(); ch != nil { // a renegotiation: its connection comes at once
			select {
			case <-*ch:
			case <-cx.Done():
			}
			g = s.live.Load()
		}
	}
	if g == nil {
		err := s.unavailable()
		release()
		return nil, nil, err
	}
	return g, release, nil
}

// startLazy is the activation of a lazy client: with a usable cached entry it registers
// the cached tools and instructions and reports [PhaseLazy] without starting anything (it
// reports true); otherwise it starts the server, as an eager client does, to fill the
// catalog (and reports false: apply waits for the first attempt). The idle worker stops it
// later either way.
func (s *supervisor) startLazy(entry *catalog.Server) bool {
	if entry != nil {
		tools, err := s.cachedTools(entry)
		if err == nil {
			err = s.set.Replace(tools)
		}
		if err == nil {
			s.setInstructions(entry.Instructions)
			st := Status{Phase: PhaseLazy, Tools: s.set.Names(), InstructionBytes: len(s.instructions()), ProtocolVersion: entry.ProtocolVersion}
			if si := entry.ServerInfo; si != nil {
				st.ServerName, st.ServerVersion, st.ServerDescription = si.Name, si.Version, si.Description
			}
			s.report(st)
			return true
		}
		s.log.Warn("the cached catalog cannot be registered; starting the server to list its tools", "err", s.scrubErr(err))
	}
	s.lazy.mu.Lock()
	s.lazy.startLocked()
	s.lazy.mu.Unlock()
	return false
}

// attempted records the outcome of a run's first connection attempt: the first ever
// closes s.ready (apply waits for it), and a lazy server's callers are woken.
func (s *supervisor) attempted(err error) {
	s.readyOnce.Do(func() {
		s.startErr = err
		close(s.ready)
	})
	if s.lazy != nil {
		s.lazy.attempted(err)
	}
}

// stoppedStatus is the report of a run that ends: idle when a lazy server's run was
// stopped while the client stays (for idleness, or to start again after giving up; its
// tools stay registered), else disposed.
func (s *supervisor) stoppedStatus() Status {
	if s.lazy != nil && s.c.Err() == nil {
		return Status{Phase: PhaseIdle, Tools: s.set.Names(), InstructionBytes: len(s.instructions())}
	}
	return Status{Phase: PhaseDisposed}
}

// withdraw removes the server's tools and instructions after a failure that ends its run's
// attempts. A lazy server keeps them: its entry is in the catalog, and the next call starts
// it again and reports why that failed.
func (s *supervisor) withdraw() {
	if s.lazy != nil {
		return
	}
	_ = s.set.Clear()
	s.setInstructions("")
}

// Start starts a lazy server now if it is not running, and waits for its first connection
// attempt (bounded by cx): for a search that is about to load one of the server's tools, so
// that the call finds it ready. It returns the start's error; for a server that is not lazy
// it does nothing.
func (u *Upstream) Start(cx context.Context) error {
	if u.s.lazy == nil {
		return nil
	}
	release, err := u.s.lazy.acquire(cx)
	if err != nil {
		return err
	}
	release()
	return nil
}

// Lazy reports whether the server starts lazily (startup: lazy).
func (u *Upstream) Lazy() bool { return u.s.lazy != nil }
