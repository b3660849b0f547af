package ptc_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(memoryChildEnv); memoryChildEnv != "" && spec != "" {
		// The test binary run again by TestMemoryProbesUnderAddressSpaceLimit.
		os.Exit(memoryChild(spec))
	}
	goleak.VerifyTestMain(m)
}
