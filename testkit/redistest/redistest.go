// Package redistest starts a real Redis server (redis-server, the Debian package
// redis-server) for the tests of the gateway's shared store, on a Unix socket in the test's
// temporary directory. Only _test.go files may import this package (internal/archtest
// checks it).
package redistest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Server is one redis-server process. Its fields are set by Start and not changed after.
type Server struct {
	// URL is where clients connect: unix://<socket>.
	URL string
	// Socket is the Unix socket's path; Dir the server's working directory (its
	// append-only file, with AppendOnly).
	Socket, Dir string

	cmd  *exec.Cmd
	done chan error
}

// Options shape the server.
type Options struct {
	// AppendOnly turns Redis's append-only file on, with an fsync per write (appendfsync
	// always): what the gateway's audit trail asks of a production Redis.
	AppendOnly bool
	// Dir is the working directory (default: a temporary directory of the test): a server
	// started again on the same Dir with AppendOnly finds what the last one wrote.
	Dir string
}

// Binary returns the path of redis-server, or fails t when $CI is set and skips it
// otherwise, with a message that says how to install it.
func Binary(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err == nil {
		return path
	}
	msg := "redis-server is not installed (apt-get install -y redis-server; .ci/run installs it)"
	if os.Getenv("CI") != "" {
		t.Fatalf("%s: CI is set, the tests that need it must run", msg)
	}
	fmt.Fprintln(os.Stderr, "redistest: SKIPPING: "+msg)
	t.Skip("SKIPPED: " + msg)
	return ""
}

// Start starts redis-server and returns once it accepts connections (it says so on its
// standard output). The server is stopped when the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	bin := Binary(t)
	dir := opts.Dir
	if dir == "" {
		dir = t.TempDir()
	}
	// A Unix socket path is limited to about 100 bytes: keep it short.
	sockDir, err := os.MkdirTemp("", "redis")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(sockDir) })
	s := &Server{Socket: filepath.Join(sockDir, "s"), Dir: dir, done: make(chan error, 1)}
	s.URL = "unix://" + s.Socket
	args := []string{"--port", "0", "--unixsocket", s.Socket, "--unixsocketperm", "700", "--dir", dir,
		"--save", "", "--daemonize", "no", "--loglevel", "notice"}
	if opts.AppendOnly {
		args = append(args, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		args = append(args, "--appendonly", "no")
	}
	s.cmd = exec.Command(bin, args...)
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.cmd.Stderr = s.cmd.Stdout
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	ready := make(chan struct{})
	var lines []string
	go func() {
		sc := bufio.NewScanner(out)
		signalled := false
		for sc.Scan() {
			line := sc.Text()
			if !signalled {
				lines = append(lines, line)
			}
			if !signalled && strings.Contains(strings.ToLower(line), "ready to accept connections") {
				signalled = true
				close(ready)
			}
		}
		s.done <- s.cmd.Wait()
	}()
	t.Cleanup(s.Stop)
	select {
	case <-ready:
	case err := <-s.done:
		s.done <- err
		t.Fatalf("redis-server ended before it was ready (%v):\n%s", err, strings.Join(lines, "\n"))
	case <-time.After(30 * time.Second):
		t.Fatal("redis-server was not ready within 30 s")
	}
	return s
}

// Stop kills the server (SIGKILL: what it wrote to its append-only file with appendfsync
// always is on disk) and waits for it. It is idempotent.
func (s *Server) Stop() {
	if s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	if err, ok := <-s.done; ok {
		_ = err
		close(s.done)
	}
}
