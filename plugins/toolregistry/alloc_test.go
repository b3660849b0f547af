//go:build !race

package toolregistry_test

import (
	"encoding/json"
	"testing"

	"github.com/cordisgo/harness/plugins/toolregistry"
)

// A call whose tool does not wait on its context allocates nothing: the call's state, and
// the Call and context the tool is handed, are reused, and call IDs are made a block at a
// time. (Each call allocated 528 bytes in two objects, then 192 in one, and on two cores
// the garbage collection of them was what kept BenchmarkExecuteNoopParallel from scaling:
// issue 39.) The race detector allocates on its own, hence the build tag.
func TestExecuteAllocations(t *testing.T) {
	root, reg := benchRegistry(t)
	args := json.RawMessage(`{}`)
	allocs := testing.AllocsPerRun(2000, func() {
		if _, err := reg.Execute(root, root, "noop", args, toolregistry.ExecOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 0.1 {
		t.Fatalf("a no-op call allocates %.2f objects, want 0", allocs)
	}
}
