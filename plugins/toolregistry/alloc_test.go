//go:build !race

package toolregistry_test

import (
	"encoding/json"
	"testing"

	"github.com/cordisgo/harness/plugins/toolregistry"
)

// A call allocates only what its tool may keep past its return, its Call and context: the
// rest of the call's state is reused, and call IDs are made a block at a time. (Each call
// allocated 528 bytes in two objects, and on two cores the garbage collection of them was
// much of what kept BenchmarkExecuteNoopParallel from scaling: issue 39.) The race
// detector allocates on its own, hence the build tag.
func TestExecuteAllocations(t *testing.T) {
	root, reg := benchRegistry(t)
	args := json.RawMessage(`{}`)
	allocs := testing.AllocsPerRun(2000, func() {
		if _, err := reg.Execute(root, root, "noop", args, toolregistry.ExecOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1.1 {
		t.Fatalf("a no-op call allocates %.2f objects, want 1 (its Call and context)", allocs)
	}
}
