package mcpmanager

import (
	"testing"

	"github.com/cordisgo/harness/testkit/mcptest"
)

// TestMain serves the stdio test server when the binary is started as one (mcptest.Stdio).
func TestMain(m *testing.M) { mcptest.Main(m) }
