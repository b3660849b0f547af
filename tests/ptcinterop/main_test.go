//go:build unix

package ptcinterop

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/internal/npmci"
)

// suite is this directory's npm packages (the tests' working directory).
var suite = npmci.Suite{Name: "ptcinterop", Dir: ".", Prefix: "tests/ptcinterop"}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
