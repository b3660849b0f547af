// Package benchtest holds what benchmarks that measure two ways of doing one thing side by
// side share: running the two in turns in one loop, so that neither always runs after the
// other (on a warm cache, or into a collection the other started), and the median of what
// each measured (a busy machine adds outliers that would dominate a mean). Only _test.go
// files may import it (internal/archtest checks it).
//
// Its functions keep no state; they may be called from any goroutine on arguments that
// goroutine owns.
package benchtest

import (
	"slices"
	"testing"
	"time"
)

// Alternate runs x and y once each per iteration of b.Loop, y first in the first
// iteration and x first in the next, and so on.
func Alternate(b *testing.B, x, y func()) {
	i := 0
	for b.Loop() {
		if i++; i%2 == 0 {
			x()
			y()
		} else {
			y()
			x()
		}
	}
}

// Median returns the median of d, which it sorts. d must not be empty.
func Median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}
