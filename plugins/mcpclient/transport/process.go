package transport

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

// ErrCleanupIncomplete means a stdio server's process group could not be
// confirmed gone after close (or after a failed connect). A supervisor
// must not start another process for the same server while it is
// unresolved: two generations would overlap.
var ErrCleanupIncomplete = errors.New("mcp server process group could not be confirmed gone")

// Shutdown timing. The SDK closes stdin and waits the terminate duration before
// it signals the direct child; then the whole group gets SIGTERM, killGrace
// to exit, SIGKILL, and killWait to disappear.
const (
	defaultTerminateDuration = 2 * time.Second
	defaultKillGrace         = 2 * time.Second
	killWait                 = 2 * time.Second
	// ReapWait bounds waiting for the SDK's close (which reaps the leader)
	// after the group was killed, and a session's end after its close.
	ReapWait = 2 * time.Second
	// drainWait bounds waiting for stderr EOF once the group is gone; a
	// process that escaped the group may still hold the pipe.
	drainWait = time.Second
	// cmdWaitDelay is exec.Cmd.WaitDelay: Wait never blocks longer than
	// this on I/O after the process exited.
	cmdWaitDelay = 2 * time.Second
)

// Spec describes a stdio server's process. The zero values of the optional fields are
// documented defaults.
type Spec struct {
	// Command is the executable (looked up in PATH when it has no path separator), Args its
	// arguments, Dir its working directory ("": the parent's).
	Command string
	Args    []string
	Dir     string
	// Env sets variables on top of the inherited ones (Inherit), always winning.
	Env     map[string]string
	Inherit Inherit
	// ParentEnv is the environment the child may inherit from (nil: os.Environ()); GOOS
	// selects the allow-list and the case rules ("": runtime.GOOS).
	ParentEnv []string
	GOOS      string
	// StderrTailBytes caps the stderr ring (0: 8 KiB).
	StderrTailBytes int
	// KillGrace is how long the group gets between SIGTERM and SIGKILL (0: 2 s).
	KillGrace time.Duration
}

// Process owns a stdio child: the command, its process group, and
// the stderr pipe drained into a tail buffer. The child starts when its
// [Process.Transport] connects, in a process group of its own; [Process.Shutdown]
// ends the whole group, grandchildren included, and says whether it is confirmed gone.
//
// Concurrency: pgid, conn and stopWatchdog are written once by the
// goroutine running the connect (inside Transport's Connect) before the
// watchdog is armed and before the connection is published; afterwards
// they are only read. Stderr is safe for concurrent use.
type Process struct {
	cmd     *exec.Cmd
	stderr  *TailBuffer
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

// NewProcess prepares the process of spec and starts draining its stderr; the child starts
// when [Process.Transport] connects. It fails at once, with an *fs.PathError, when spec runs
// an interpreter whose script does not exist ([MissingScript]).
func NewProcess(spec Spec) (*Process, error) {
	parent := spec.ParentEnv
	if parent == nil {
		parent = os.Environ()
	}
	goos := spec.GOOS
	if goos == "" {
		goos = runtime.GOOS
	}
	if err := MissingScript(spec.Command, spec.Args, spec.Dir); err != nil {
		return nil, err // permanent: retrying cannot make the file appear
	}
	cmd := exec.Command(spec.Command, spec.Args...)
	cmd.Dir = spec.Dir
	cmd.Env = buildEnv(parent, goos, spec.Inherit, spec.Env) // never nil: nil would inherit everything
	cmd.WaitDelay = cmdWaitDelay
	startInOwnGroup(cmd)
	// An *os.File stderr is handed to the child directly: os/exec starts no
	// copy goroutine, so a grandchild holding stderr cannot stall Wait.
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	cmd.Stderr = w
	p := &Process{
		cmd:       cmd,
		stderr:    NewTailBuffer(spec.StderrTailBytes),
		stderrR:   r,
		stderrW:   w,
		drained:   make(chan struct{}),
		killGrace: orDefault(spec.KillGrace, defaultKillGrace),
	}
	go p.drain()
	return p, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Stderr returns the ring buffer holding the end of the server's stderr.
func (p *Process) Stderr() *TailBuffer { return p.stderr }

// Group returns the process group id (the leader's pid), or 0 before the child started.
func (p *Process) Group() int { return p.pgid }

// Transport returns the SDK transport over the child's stdin and stdout: the SDK's
// CommandTransport (which waits terminate, 0: 2 s, after closing stdin before it signals the
// child) plus what the SDK does not do: it records the process group and arms a watchdog
// that kills the group if the connect's context ends before the handshake completes
// ([Process.StopWatchdog] disarms it). ready, if not nil, is called once the child started.
func (p *Process) Transport(terminate time.Duration, ready func()) mcp.Transport {
	return &stdioTransport{
		inner: &mcp.CommandTransport{
			Command:           p.cmd,
			TerminateDuration: orDefault(terminate, defaultTerminateDuration),
		},
		proc:  p,
		ready: ready,
	}
}

// StopWatchdog disarms the connect watchdog; it reports false when the watchdog had already
// killed the group (the connect's context ended while connecting).
func (p *Process) StopWatchdog() bool {
	if p.stopWatchdog == nil {
		return true
	}
	return p.stopWatchdog()
}

// CloseConnection closes the transport connection, if the child started (idempotent; the SDK
// has usually closed it already after a failed connect).
func (p *Process) CloseConnection() error {
	if p.conn == nil {
		return nil
	}
	return p.conn.Close()
}

// drain copies the server's stderr into the tail buffer until the pipe closes. It reads
// through a small buffer of its own: io.Copy would hold a 32 KiB one for the life of every
// server (the read blocks between writes), which a host with many quiet servers pays for.
// The pipe is wrapped so that io.CopyBuffer uses that buffer (*os.File has a WriteTo that
// would bring its own).
func (p *Process) drain() {
	defer close(p.drained)
	_, _ = io.CopyBuffer(p.stderr, struct{ io.Reader }{p.stderrR}, make([]byte, 2048))
}

// stdioTransport is mcp.CommandTransport plus the bookkeeping the SDK does
// not do: it records the process group and arms the watchdog that kills
// the group if the connect cx ends before the handshake completes.
type stdioTransport struct {
	inner *mcp.CommandTransport
	proc  *Process
	ready func() // may be nil
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

// Shutdown ends the process: graceful (closing the session, which closes
// stdin and lets the SDK wait for and reap the leader) runs first and may
// use cx's time; then the group gets SIGTERM, SIGKILL after the grace
// period, and the result (wrapping [ErrCleanupIncomplete] otherwise) says whether it is
// confirmed gone. The stderr drain is stopped either way. graceful may be nil.
func (p *Process) Shutdown(cx context.Context, graceful func() error, log *slog.Logger) error {
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
	case <-time.After(ReapWait):
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
func (p *Process) endGroup(log *slog.Logger) bool {
	return endGroup(groupEnd{
		term: func() { terminateGroup(p) },
		kill: func() {
			log.Warn("mcp server process group ignored SIGTERM, killing it", "pgid", p.pgid)
			killGroup(p)
		},
		gone: func() bool { return groupGone(p) },
	}, p.killGrace)
}

// groupEnd is what ending a process group takes: asking its members to exit, killing
// them, and telling whether any is left.
type groupEnd struct {
	term, kill func()
	gone       func() bool
}

// endGroup ends a group as a stdio server's is ended: SIGTERM, grace to exit, SIGKILL,
// and killWait to disappear. It reports whether the group is confirmed gone.
func endGroup(g groupEnd, grace time.Duration) bool {
	if g.gone() {
		return true
	}
	g.term()
	if waitGone(g.gone, grace) {
		return true
	}
	g.kill()
	return waitGone(g.gone, killWait)
}

// waitGone polls until the group is gone or d has passed. There is no
// notification for the exit of processes that are not our children.
func (p *Process) waitGone(d time.Duration) bool {
	return waitGone(func() bool { return groupGone(p) }, d)
}

// waitGone polls gone until it reports true or d has passed.
func waitGone(gone func() bool, d time.Duration) bool {
	deadline := time.Now().Add(d)
	step := time.Millisecond
	for {
		if gone() {
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
func (p *Process) stopDrain() {
	_ = p.stderrW.Close() // in case the child never started
	select {
	case <-p.drained:
	case <-time.After(drainWait):
		_ = p.stderrR.Close() // unblocks the pending Read
		<-p.drained
	}
	_ = p.stderrR.Close()
}
