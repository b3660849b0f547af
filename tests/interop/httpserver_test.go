//go:build unix

package interop

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cordisgo/harness/internal/loopback"
)

const (
	// httpStartTimeout bounds the wait for the HTTP server to accept connections.
	httpStartTimeout = 30 * time.Second
	// httpPollInterval is how often the port is probed while the server starts.
	httpPollInterval = 20 * time.Millisecond
	// stopGrace is how long the server's process group has to exit after SIGTERM before it
	// is killed.
	stopGrace = 5 * time.Second
)

// errPortTaken reports that the chosen port was taken before the server could bind it.
var errPortTaken = errors.New("port already in use")

// httpServer is the package's Streamable HTTP server, a child process in its own process
// group, listening on a loopback port picked by the test.
type httpServer struct {
	url    string // the MCP endpoint
	pid    int
	out    *tail
	exited chan struct{} // closed when the process has been waited for
}

// startHTTPServer starts `node <entry> streamableHttp` with PORT set to a free port and
// waits until the port accepts connections. The process group is killed when t ends.
func startHTTPServer(t *testing.T, srv server) *httpServer {
	t.Helper()
	for attempt := 1; ; attempt++ {
		h, err := tryStartHTTPServer(t, srv)
		if err == nil {
			return h
		}
		if !errors.Is(err, errPortTaken) || attempt == 3 {
			t.Fatal(err)
		}
		t.Logf("retrying with another port: %v", err)
	}
}

func tryStartHTTPServer(t *testing.T, srv server) (*httpServer, error) {
	port, err := loopback.FreePort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	h := &httpServer{url: "http://" + addr + "/mcp", out: &tail{max: 16 << 10}, exited: make(chan struct{})}
	// The package's CLI: `streamableHttp` serves POST/GET/DELETE /mcp on $PORT (default 3001).
	cmd := exec.Command(srv.node, srv.entry, "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = h.out, h.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s streamableHttp: %w", srv.entry, err)
	}
	h.pid = cmd.Process.Pid
	go func() {
		_ = cmd.Wait()
		close(h.exited)
	}()

	deadline := time.NewTimer(httpStartTimeout)
	defer deadline.Stop()
	poll := time.NewTicker(httpPollInterval)
	defer poll.Stop()
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = conn.Close()
			break
		}
		select {
		case <-poll.C:
		case <-h.exited:
			out := h.out.String()
			if strings.Contains(out, "EADDRINUSE") || strings.Contains(out, "already in use") {
				return nil, fmt.Errorf("%w: %d; output:\n%s", errPortTaken, port, out)
			}
			return nil, fmt.Errorf("the HTTP server exited before listening on %s; output:\n%s", addr, out)
		case <-deadline.C:
			h.stop(t)
			return nil, fmt.Errorf("the HTTP server did not accept connections on %s within %v; output:\n%s", addr, httpStartTimeout, h.out.String())
		}
	}
	t.Cleanup(func() {
		h.stop(t)
		if t.Failed() {
			t.Logf("HTTP server output:\n%s", h.out.String())
		}
	})
	return h, nil
}

// stop terminates the server's process group (SIGTERM, then SIGKILL after stopGrace) and
// waits for the server process.
func (h *httpServer) stop(t *testing.T) {
	select {
	case <-h.exited:
		return
	default:
	}
	if err := syscall.Kill(-h.pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		t.Errorf("SIGTERM to process group %d: %v", h.pid, err)
	}
	grace := time.NewTimer(stopGrace)
	defer grace.Stop()
	select {
	case <-h.exited:
	case <-grace.C:
		if err := syscall.Kill(-h.pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			t.Errorf("SIGKILL to process group %d: %v", h.pid, err)
		}
		<-h.exited
	}
}

// tail keeps the last max bytes written to it. It is safe for concurrent use.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (w *tail) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if over := len(w.buf) - w.max; over > 0 {
		w.buf = append(w.buf[:0], w.buf[over:]...)
	}
	return len(p), nil
}

func (w *tail) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}
