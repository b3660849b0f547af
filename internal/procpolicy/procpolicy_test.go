package procpolicy

import (
	"runtime"
	"testing"
)

func TestProcs(t *testing.T) {
	for def, want := range map[int]int{1: 1, 2: 1, 3: 1, 4: 2, 5: 2, 16: 8} {
		if got := Procs(def); got != want {
			t.Errorf("Procs(%d) = %d, want %d", def, got, want)
		}
	}
}

func TestApply(t *testing.T) {
	runtime.SetDefaultGOMAXPROCS()
	def := runtime.GOMAXPROCS(0)
	restore := Apply()
	if got := runtime.GOMAXPROCS(0); got != Procs(def) {
		t.Errorf("GOMAXPROCS = %d under the policy, want %d (default %d)", got, Procs(def), def)
	}
	ForStdioServer()
	if got := runtime.GOMAXPROCS(0); got != def {
		t.Errorf("GOMAXPROCS = %d for a stdio server, want the default %d", got, def)
	}
	runtime.GOMAXPROCS(Procs(def))
	restore()
	if got := runtime.GOMAXPROCS(0); got != def {
		t.Errorf("GOMAXPROCS = %d after restore, want %d", got, def)
	}
}

// An explicit GOMAXPROCS in the environment wins: the policy changes nothing.
func TestEnvironmentWins(t *testing.T) {
	runtime.SetDefaultGOMAXPROCS()
	t.Setenv("GOMAXPROCS", "7")
	before := runtime.GOMAXPROCS(0)
	Apply()()
	ForStdioServer()
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Errorf("GOMAXPROCS = %d, want %d unchanged", got, before)
	}
}
