//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package termform

import (
	"context"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// tty reads a terminal key by key, with the read interrupted when a context ends. It is used
// by one form at a time (the Responder's lock).
type tty struct {
	f  *os.File
	fd int
}

// openTTY checks that f is a terminal.
func openTTY(f *os.File) (*tty, error) {
	fd := int(f.Fd())
	if _, err := unix.IoctlGetTermios(fd, ioctlGetTermios); err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	return &tty{f: f, fd: fd}, nil
}

// raw switches the terminal to reading key by key — no line editing, no echo, and no signal
// for Ctrl-C (the form reads it as "cancel") — keeping the output processing, so that "\n"
// still starts a line. It returns the function that restores the terminal.
func (t *tty) raw() (func(), error) {
	old, err := unix.IoctlGetTermios(t.fd, ioctlGetTermios)
	if err != nil {
		return nil, fmt.Errorf("reading the terminal's mode: %w", err)
	}
	r := *old
	r.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	r.Iflag &^= unix.IXON | unix.ISTRIP | unix.INLCR | unix.IGNCR
	r.Iflag |= unix.ICRNL
	r.Cc[unix.VMIN] = 1
	r.Cc[unix.VTIME] = 0
	if err := unix.IoctlSetTermios(t.fd, ioctlSetTermios, &r); err != nil {
		return nil, fmt.Errorf("setting the terminal's mode: %w", err)
	}
	return func() { _ = unix.IoctlSetTermios(t.fd, ioctlSetTermios, old) }, nil
}

// reader returns a function that reads what is typed, waiting until something is or cx
// ends (it then returns cx's cause), and the function that releases it. The wait is a poll
// on the terminal and on a pipe that cx's end writes to: no read is left blocked on the
// terminal after the form, where it would take the next line typed for someone else.
func (t *tty) reader(cx context.Context) (read func(p []byte) (int, error), release func(), err error) {
	wr, ww, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	stop := context.AfterFunc(cx, func() { _, _ = ww.Write([]byte{0}) })
	release = func() {
		stop()
		_ = wr.Close()
		_ = ww.Close()
	}
	fds := []unix.PollFd{{Fd: int32(t.fd), Events: unix.POLLIN}, {Fd: int32(wr.Fd()), Events: unix.POLLIN}}
	read = func(p []byte) (int, error) {
		for {
			if cx.Err() != nil {
				return 0, context.Cause(cx)
			}
			fds[0].Revents, fds[1].Revents = 0, 0
			if _, err := unix.Poll(fds, -1); err != nil {
				if errors.Is(err, unix.EINTR) {
					continue
				}
				return 0, fmt.Errorf("waiting for the terminal: %w", err)
			}
			if fds[1].Revents != 0 {
				return 0, context.Cause(cx)
			}
			if fds[0].Revents == 0 {
				continue
			}
			n, err := unix.Read(t.fd, p)
			switch {
			case errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR):
				continue
			case err != nil:
				return 0, fmt.Errorf("reading the terminal: %w", err)
			case n == 0:
				return 0, errHangup
			}
			return n, nil
		}
	}
	return read, release, nil
}
