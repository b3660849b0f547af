package profiles_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cordisgo/harness/profiles"
)

// TestFleetKey: the fleet defaults are read from the profile, overlaid by --set, dumped,
// and refused with the key named when wrong.
func TestFleetKey(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "p.yaml")
	write(t, dir, "p.yaml", "extends: cli\nfleet: {startup: lazy, idleTimeoutMs: 300000}\nplugins: {}\n")
	p, err := profiles.Load(profiles.LoadOptions{Name: file})
	if err != nil || p.Fleet != (profiles.Fleet{Startup: "lazy", IdleTimeoutMs: 300000}) {
		t.Fatalf("Load = %+v, %v", p, err)
	}
	out, err := p.YAML(profiles.Redact)
	if err != nil || !strings.Contains(string(out), "\nfleet:\n  startup: lazy\n  idleTimeoutMs: 300000\n") {
		t.Fatalf("dump:\n%s\n%v", out, err)
	}
	p, err = profiles.Load(profiles.LoadOptions{Name: file, Sets: []string{"fleet.startup=eager", "fleet.idleTimeoutMs=1000"}})
	if err != nil || p.Fleet != (profiles.Fleet{Startup: "eager", IdleTimeoutMs: 1000}) {
		t.Fatalf("with --set: %+v, %v", p.Fleet, err)
	}
	for _, tc := range []struct{ doc, want string }{
		{"fleet: {startup: soon}\nplugins: {}\n", `key "fleet.startup": expected eager or lazy`},
		{"fleet: {idleTimeoutMs: -1}\nplugins: {}\n", `key "fleet.idleTimeoutMs": expected a positive number of milliseconds`},
		{"fleet: {lazy: true}\nplugins: {}\n", `key "fleet.lazy": unknown key: expected startup or idleTimeoutMs`},
		{"fleet: lazy\nplugins: {}\n", `key "fleet": expected a mapping`},
	} {
		write(t, dir, "p.yaml", tc.doc)
		if _, err := profiles.Load(profiles.LoadOptions{Name: file}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.doc, err, tc.want)
		}
	}
}
