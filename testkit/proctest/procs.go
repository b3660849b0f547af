package proctest

import (
	"testing"

	"github.com/cordisgo/harness/internal/procfs"
)

// Proc is one live process as /proc/PID/stat shows it.
type Proc = procfs.Proc

// List returns the live processes, read from /proc (Linux: elsewhere it fails the test);
// zombies are left out (they are gone, only not yet reaped), as are processes that end while
// List reads them.
func List(t testing.TB) []Proc {
	t.Helper()
	all, err := procfs.List()
	if err != nil {
		t.Fatal(err)
	}
	out := all[:0]
	for _, p := range all {
		if !p.Gone() {
			out = append(out, p)
		}
	}
	return out
}

// Descendants returns the processes of all whose chain of parents leads to pid.
func Descendants(all []Proc, pid int) []Proc { return procfs.Descendants(all, pid) }
