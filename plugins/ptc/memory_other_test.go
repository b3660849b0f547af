//go:build !linux || race

package ptc_test

// memoryChildEnv is set only on Linux without the race detector, where the probes also run
// under an address-space limit (memory_linux_test.go).
const memoryChildEnv = ""

func memoryChild(string) int { return 1 }
