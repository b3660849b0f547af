//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package termform

import "golang.org/x/sys/unix"

// The ioctl requests that read and set a terminal's attributes.
const (
	ioctlGetTermios = unix.TIOCGETA
	ioctlSetTermios = unix.TIOCSETA
)
