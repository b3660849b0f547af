// Package harnessbin builds the harness binary from this checkout once per test process, for
// the suites that run it as a user would (the replica gateways behind HAProxy, the
// management page in Chromium); every test of the process shares the one build. Only
// _test.go files may import this package (internal/archtest checks it).
//
// The CLI's own tests build nothing: they re-execute their test binary as the harness.
package harnessbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var build struct {
	once sync.Once
	dir  string
	path string
	err  error
	out  []byte
}

// Path returns the harness binary, built with go build the first time a test of the process
// asks (a failure fails every test that asks). [Main] removes it when the tests end.
func Path(t testing.TB) string {
	t.Helper()
	build.once.Do(func() {
		build.dir, build.err = os.MkdirTemp("", "harnessbin-")
		if build.err != nil {
			return
		}
		build.path = filepath.Join(build.dir, "harness")
		build.out, build.err = exec.Command("go", "build", "-o", build.path, "github.com/cordisgo/harness/cmd/harness").CombinedOutput()
	})
	if build.err != nil {
		t.Fatalf("go build ./cmd/harness: %v\n%s", build.err, build.out)
	}
	return build.path
}

// M is what TestMain runs: a [testing.M], or a wrapper of one such as goleak's.
type M interface{ Run() int }

// Main returns m whose Run also removes the binary Path built, once the tests have run:
// goleak.VerifyTestMain(harnessbin.Main(m)).
func Main(m M) M { return cleanup{m} }

type cleanup struct{ m M }

func (c cleanup) Run() int {
	code := c.m.Run()
	if build.dir != "" {
		_ = os.RemoveAll(build.dir)
	}
	return code
}
