//go:build !linux

package sandbox

import "errors"

// Probe returns 0: Landlock is Linux's.
func Probe() int { return 0 }

// watchParent has no death signal to ask for here; the helper polls its parent instead.
func watchParent() error { return nil }

// restrict refuses: there is no Landlock here (Assess said so before anyone asked).
func restrict(Policy) error { return errors.New("no Landlock on this system") }
