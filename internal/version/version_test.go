package version_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/cordisgo/harness/internal/version"
)

// The line names the program, the version given (else the module's), the toolchain and the
// platform.
func TestLine(t *testing.T) {
	l := version.Line("harness", "v1.2.3")
	if !strings.HasPrefix(l, "harness v1.2.3") || !strings.HasSuffix(l, runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH) {
		t.Errorf("Line: %q", l)
	}
	if l := version.Line("harness", ""); !strings.HasPrefix(l, "harness "+version.Main()) {
		t.Errorf("Line without a version: %q", l)
	}
}
