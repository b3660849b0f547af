package profiles_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cordisgo/harness/profiles"
)

// FuzzLoad feeds arbitrary profile text, one --set and one environment
// variable to Load. Load never panics, fails only with an *Error, and a
// profile it accepts dumps to YAML that loads back to the same dump.
// Seeds: testdata/fuzz/FuzzLoad and the built-in profiles.
func FuzzLoad(f *testing.F) {
	for _, name := range profiles.BuiltinNames() {
		data, _ := profiles.Builtin(name)
		f.Add(data, "plugins.demo.enabled=false", "HARNESS_PLUGINS__TOOLS__CONFIG__X=1")
	}
	f.Fuzz(func(t *testing.T, data []byte, set, env string) {
		opts := profiles.LoadOptions{Name: "fuzz.yaml", Data: data, Environ: []string{env}, Self: "/bin/harness"}
		if set != "" {
			opts.Sets = []string{set}
		}
		p, err := profiles.Load(opts)
		if err != nil {
			var pe *profiles.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *profiles.Error: %v", err, err)
			}
			if pe.Msg == "" || pe.Err == nil {
				t.Fatalf("incomplete error %#v", pe)
			}
			return
		}
		out, err := p.YAML(profiles.Redact)
		if err != nil {
			t.Fatalf("YAML: %v", err)
		}
		plain, err := p.YAML(nil)
		if err != nil {
			t.Fatalf("YAML: %v", err)
		}
		again, err := profiles.Load(profiles.LoadOptions{Name: "fuzz.yaml", Data: plain, Self: "/bin/harness"})
		if err != nil {
			t.Fatalf("the dump does not load: %v\n%s", err, plain)
		}
		if a, b := body(t, again), body(t, p); a != b {
			t.Fatalf("the dump loads differently:\n%s\nthen\n%s", b, a)
		}
		_ = out
	})
}

// body is a profile's dump without its header comment.
func body(t *testing.T, p *profiles.Profile) string {
	out, err := p.YAML(nil)
	if err != nil {
		t.Fatalf("YAML: %v", err)
	}
	s := string(out)
	for strings.HasPrefix(s, "#") {
		_, s, _ = strings.Cut(s, "\n")
	}
	return s
}
