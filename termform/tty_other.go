//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package termform

import (
	"context"
	"errors"
	"os"
)

// tty is not available on this system: New reports ErrNotTerminal.
type tty struct{}

func openTTY(*os.File) (*tty, error) {
	return nil, errors.New("reading a terminal is not supported on this system")
}

func (*tty) raw() (func(), error) { return nil, errors.ErrUnsupported }

func (*tty) reader(context.Context) (func([]byte) (int, error), func(), error) {
	return nil, nil, errors.ErrUnsupported
}
