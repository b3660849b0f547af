//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

// Package ptytest is a test helper: a pseudo-terminal (github.com/creack/pty) seen from the
// user's side — what was drawn on it, and a keyboard — for tests of what the harness does on
// a real terminal (the elicitation form).
package ptytest

import (
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// WaitTimeout bounds every wait for the screen: a test only fails when the program hangs.
const WaitTimeout = 20 * time.Second

// Screen is a pseudo-terminal: TTY is the terminal end a program reads and draws on, and
// the Screen reads what it draws. It is safe for concurrent use by the test's goroutines.
type Screen struct {
	t    testing.TB
	ptmx *os.File
	// TTY is the terminal end, for a program run in the test's process (nil after Start,
	// which hands it to a process).
	TTY *os.File

	mu     sync.Mutex
	text   strings.Builder
	mark   int           // where the next Expect starts looking
	change chan struct{} // closed (and replaced) when text grows
	done   chan struct{}
}

// Open opens a pseudo-terminal, closed when the test ends. It skips the test when the system
// has none.
func Open(t testing.TB) *Screen {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: 120}); err != nil {
		t.Fatal(err)
	}
	s := &Screen{t: t, ptmx: ptmx, TTY: tty, change: make(chan struct{}), done: make(chan struct{})}
	go s.read()
	t.Cleanup(func() {
		if s.TTY != nil {
			_ = s.TTY.Close()
		}
		_ = ptmx.Close()
		<-s.done
	})
	return s
}

// Start starts cmd with the terminal as its stdin, stdout and stderr and as its controlling
// terminal, in a session of its own; the test's copy of the terminal end is closed, so that
// the screen ends when the process does. The caller waits for cmd.
func (s *Screen) Start(cmd *exec.Cmd) {
	s.t.Helper()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s.TTY, s.TTY, s.TTY
	if cmd.SysProcAttr == nil {
		// A session leader whose controlling terminal is its stdin.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	}
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	_ = s.TTY.Close()
	s.TTY = nil
}

func (s *Screen) read() {
	defer close(s.done)
	buf := make([]byte, 4096)
	for {
		n, err := s.ptmx.Read(buf)
		if n > 0 {
			s.mu.Lock()
			s.text.Write(buf[:n])
			close(s.change)
			s.change = make(chan struct{})
			s.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// Expect waits until the screen shows want after the previous Expect's match, and fails the
// test after WaitTimeout.
func (s *Screen) Expect(want string) {
	s.t.Helper()
	deadline := time.After(WaitTimeout)
	for {
		s.mu.Lock()
		all := s.text.String()
		change := s.change
		s.mu.Unlock()
		if i := strings.Index(all[s.mark:], want); i >= 0 {
			s.mark += i + len(want)
			return
		}
		select {
		case <-change:
		case <-deadline:
			s.t.Fatalf("the screen does not show %q; it shows:\n%s", want, all)
		}
	}
}

// All returns everything drawn so far.
func (s *Screen) All() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.text.String()
}

// Cooked reports whether the terminal is in its line mode, with echo and signals (as a
// program that switched it to reading key by key must leave it), failing the test when the
// mode cannot be read.
func (s *Screen) Cooked() bool {
	s.t.Helper()
	var tio *unix.Termios
	rc, err := s.ptmx.SyscallConn() // not Fd, which would make the reader's file blocking
	if err == nil {
		cerr := rc.Control(func(fd uintptr) { tio, err = unix.IoctlGetTermios(int(fd), ioctlGetTermios) })
		if err == nil {
			err = cerr
		}
	}
	if err != nil {
		s.t.Fatalf("reading the terminal's mode: %v", err)
	}
	return tio.Lflag&unix.ICANON != 0 && tio.Lflag&unix.ECHO != 0 && tio.Lflag&unix.ISIG != 0
}

// Type types keys on the keyboard ("\r" is Enter, "\x03" Ctrl-C).
func (s *Screen) Type(keys string) {
	s.t.Helper()
	if _, err := s.ptmx.Write([]byte(keys)); err != nil {
		s.t.Fatal(err)
	}
}
