package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// dialStdio starts cfg.Command in its own process group and connects over
// its stdin/stdout with the SDK's CommandTransport.
//
// The child is not bound to cx (exec.Command, not CommandContext): a
// watchdog kills the group only if cx ends while connecting, so a short
// startup timeout cannot kill a server that connected in time.
func dialStdio(cx context.Context, cfg Config, opts dialOptions) (*connection, error) {
	log := opts.log().With("server", cfg.ServerName)
	p, err := newStdioProcess(cfg, opts)
	if err != nil {
		return nil, connectError(cfg.ServerName, err, "")
	}
	t := &stdioTransport{
		inner: &mcp.CommandTransport{
			Command:           p.cmd,
			TerminateDuration: orDefault(opts.terminateDuration, defaultTerminateDuration),
		},
		proc:  p,
		ready: opts.onTransportReady,
	}
	cs, err := connectSession(cx, cfg, opts, t)
	if p.stopWatchdog != nil && !p.stopWatchdog() {
		// ctx ended while connecting and the watchdog killed the group.
		// Report ctx's error whichever symptom the SDK saw first (EOF or
		// ctx), and drop a session that completed at the last moment.
		switch {
		case err == nil:
			_ = cs.Close()
			err = context.Cause(cx)
		case !errors.Is(err, cx.Err()):
			err = fmt.Errorf("%w (%w)", context.Cause(cx), err)
		}
	}
	if err != nil {
		var closeConn func() error
		if p.conn != nil {
			closeConn = p.conn.Close // idempotent; the SDK has usually closed it already
		}
		canceledcx, cancel := context.WithCancel(context.Background())
		cancel() // no graceful phase: go straight to the group signals
		cleanupErr := p.shutdown(canceledcx, closeConn, log)
		cerr := connectError(cfg.ServerName, err, p.stderr.Tail())
		if cleanupErr != nil {
			return nil, fmt.Errorf("%w; cleanup: %w", cerr, cleanupErr)
		}
		return nil, cerr
	}
	conn := newConnection(cfg, TransportStdio, cs, func(cx context.Context) error {
		if err := p.shutdown(cx, cs.Close, log); err != nil {
			return fmt.Errorf("mcp server %q: close: %w", cfg.ServerName, err)
		}
		return nil
	})
	conn.stderr = p.stderr
	conn.pgid = p.pgid
	log.Debug("mcp server started", "pid", p.pgid, "command", cfg.Command)
	return conn, nil
}

// stdioProcess owns a stdio child: the command, its process group, and
// the stderr pipe drained into a tail buffer.
//
// Concurrency: pgid, conn and stopWatchdog are written once by the
// goroutine running dial (inside stdioTransport.Connect) before the
// watchdog is armed and before the connection is published; afterwards
// they are only read. stderr is safe for concurrent use.
type stdioProcess struct {
	cmd     *exec.Cmd
	stderr  *tailBuffer
	stderrR *os.File // drained by drain
	stderrW *os.File // the child's stderr; the parent's copy is closed after start
	drained chan struct{}
	// killGrace is the time between SIGTERM and SIGKILL to the group.
	killGrace time.Duration

	pgid         int            // leader pid == group id; 0 until started
	conn         mcp.Connection // the transport connection once started
	stopWatchdog func() bool    // disarms the connect-ctx watchdog
	reaped       atomic.Bool    // the SDK's close (and so cmd.Wait) returned
}

func newStdioProcess(cfg Config, opts dialOptions) (*stdioProcess, error) {
	parent := opts.parentEnv
	if parent == nil {
		parent = os.Environ()
	}
	goos := opts.goos
	if goos == "" {
		goos = runtime.GOOS
	}
	if err := missingScript(cfg); err != nil {
		return nil, err // permanent: retrying cannot make the file appear
	}
	cmd := exec.Command(cfg.Command, cfg.Args...)
	cmd.Dir = cfg.Cwd
	cmd.Env = buildEnv(parent, goos, cfg.InheritEnv, cfg.Env) // never nil: nil would inherit everything
	cmd.WaitDelay = cmdWaitDelay
	startInOwnGroup(cmd)
	// An *os.File stderr is handed to the child directly: os/exec starts no
	// copy goroutine, so a grandchild holding stderr cannot stall Wait.
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	cmd.Stderr = w
	p := &stdioProcess{
		cmd:       cmd,
		stderr:    newTailBuffer(opts.stderrTailBytes),
		stderrR:   r,
		stderrW:   w,
		drained:   make(chan struct{}),
		killGrace: orDefault(opts.killGrace, defaultKillGrace),
	}
	go p.drain()
	return p, nil
}

// drain copies the server's stderr into the tail buffer until the pipe closes. It reads
// through a small buffer of its own: io.Copy would hold a 32 KiB one for the life of every
// server (the read blocks between writes), which a host with many quiet servers pays for.
// The pipe is wrapped so that io.CopyBuffer uses that buffer (*os.File has a WriteTo that
// would bring its own).
func (p *stdioProcess) drain() {
	defer close(p.drained)
	_, _ = io.CopyBuffer(p.stderr, struct{ io.Reader }{p.stderrR}, make([]byte, 2048))
}

// stdioTransport is mcp.CommandTransport plus the bookkeeping the SDK does
// not do: it records the process group and arms the watchdog that kills
// the group if the connect cx ends before the handshake completes.
type stdioTransport struct {
	inner *mcp.CommandTransport
	proc  *stdioProcess
	ready func() // dialOptions.onTransportReady; may be nil
}

// Connect implements mcp.Transport.
func (t *stdioTransport) Connect(cx context.Context) (mcp.Connection, error) {
	conn, err := t.inner.Connect(cx)
	// The child has its own copy of the stderr write end by now (or was
	// never started); close ours so the drain sees EOF when the group ends.
	_ = t.proc.stderrW.Close()
	if err != nil {
		return nil, err
	}
	p := t.proc
	p.pgid = t.inner.Command.Process.Pid
	trackGroup(p)
	p.conn = conn
	p.stopWatchdog = context.AfterFunc(cx, func() { killGroup(p) })
	if t.ready != nil {
		t.ready()
	}
	return conn, nil
}

// shutdown ends the process: graceful (closing the session, which closes
// stdin and lets the SDK wait for and reap the leader) runs first and may
// use ctx's time; then the group gets SIGTERM, SIGKILL after the grace
// period, and the result says whether it is confirmed gone. The stderr
// drain is stopped either way. graceful may be nil.
func (p *stdioProcess) shutdown(cx context.Context, graceful func() error, log *slog.Logger) error {
	defer p.stopDrain()
	if p.pgid == 0 {
		return nil // never started
	}
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		if graceful != nil {
			if err := graceful(); err != nil {
				// Usually benign: an exit status or signal from a server
				// that did not like stdin closing.
				log.Debug("mcp server close", "pid", p.pgid, "err", err)
			}
		}
		p.reaped.Store(true)
	}()
	select {
	case <-finished:
	case <-cx.Done():
	}
	gone := p.endGroup(log)
	select {
	case <-finished:
	case <-time.After(reapWait):
	}
	if !gone {
		gone = groupGone(p)
	}
	if !gone {
		log.Error("mcp server process group survived SIGKILL", "pgid", p.pgid)
		return fmt.Errorf("process group %d: %w", p.pgid, ErrCleanupIncomplete)
	}
	untrackGroup(p)
	return nil
}

// endGroup terminates what is left of the group and reports whether it is
// confirmed gone.
func (p *stdioProcess) endGroup(log *slog.Logger) bool {
	if groupGone(p) {
		return true
	}
	terminateGroup(p)
	if p.waitGone(p.killGrace) {
		return true
	}
	log.Warn("mcp server process group ignored SIGTERM, killing it", "pgid", p.pgid)
	killGroup(p)
	return p.waitGone(killWait)
}

// waitGone polls until the group is gone or d has passed. There is no
// notification for the exit of processes that are not our children.
func (p *stdioProcess) waitGone(d time.Duration) bool {
	deadline := time.Now().Add(d)
	step := time.Millisecond
	for {
		if groupGone(p) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(step)
		step = min(2*step, 25*time.Millisecond)
	}
}

// stopDrain waits for the stderr drain to reach EOF, forcing it after
// drainWait (a process outside the group may still hold the pipe).
func (p *stdioProcess) stopDrain() {
	_ = p.stderrW.Close() // in case the child never started
	select {
	case <-p.drained:
	case <-time.After(drainWait):
		_ = p.stderrR.Close() // unblocks the pending Read
		<-p.drained
	}
	_ = p.stderrR.Close()
}
