//go:build !linux

package toolsearch_test

import "time"

// threadCPU is not measured on this system.
func threadCPU() time.Duration { return 0 }
