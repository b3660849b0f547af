package mcpauth_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/internal/oauthtest"
)

func TestMain(m *testing.M) {
	if os.Getenv(oauthtest.BrowserEnv) == "1" {
		// The test binary re-executed as $BROWSER: play the user and exit.
		os.Exit(oauthtest.BrowserMain(os.Args[1:]))
	}
	goleak.VerifyTestMain(m)
}
