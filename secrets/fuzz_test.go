package secrets

import (
	"errors"
	"strings"
	"testing"
)

// fuzzCreds is a credentials provider that knows one secret.
type fuzzCreds struct{ value string }

func (c fuzzCreds) Lookup(name string) (string, error) {
	if name == "known" {
		return c.value, nil
	}
	return "", errors.New("no such secret")
}

// FuzzTemplate parses arbitrary template text and resolves it against an environment with
// VAR (set to value), EMPTY (set, empty) and nothing else, and credentials that know the
// secret "known" (also value). No input panics; every rejected template and every failed
// resolution says which reference was wrong ("${…") and never quotes a value; a successful
// resolution contains no unresolved reference that the text did not escape, and a template
// without references resolves to its literal text.
func FuzzTemplate(f *testing.F) {
	for _, seed := range []string{
		"", "plain", "${VAR}", "a${VAR}b${VAR}", "${VAR:-d}", "${EMPTY:-fallback}", "${UNSET:-}",
		"${UNSET}", "${secret:known}", "${secret:unknown}", "${secret:}", "${secret:a/b}",
		"$${VAR}", "$$${VAR}", "$", "${", "${}", "${VAR", "${1A}", "${VAR:-${VAR}}", "${VAR:-a}b}",
		"Bearer ${secret:known}", "${VAR:-é}", "\xff${VAR}",
	} {
		f.Add(seed, "s3cr3t-value")
	}
	f.Fuzz(func(t *testing.T, s, value string) {
		tmpl, err := parseTemplate(s)
		if err != nil {
			if !strings.Contains(err.Error(), "${") {
				t.Fatalf("parse %q: the error does not name the reference: %v", s, err)
			}
			return
		}
		env := map[string]string{"VAR": value, "EMPTY": ""}
		r := &Resolver{
			LookupEnv: func(name string) (string, bool) { v, ok := env[name]; return v, ok },
			Secrets:   func() (Credentials, error) { return fuzzCreds{value}, nil },
		}
		out, err := r.expand(tmpl)
		if err != nil {
			msg := err.Error()
			if !strings.Contains(msg, "${") {
				t.Fatalf("expand %q: the error does not name the reference: %v", s, err)
			}
			if len(value) >= 4 && strings.Contains(msg, value) && !strings.Contains(s, value) {
				t.Fatalf("expand %q: the error quotes a value: %v", s, err)
			}
			if !errors.Is(err, ErrMissingVariable) && !strings.Contains(msg, "no such secret") {
				t.Fatalf("expand %q: unexpected failure: %v", s, err)
			}
			return
		}
		if tmpl.static() {
			if want := strings.ReplaceAll(s, "$${", "${"); out != want {
				t.Fatalf("static %q resolved to %q, want %q", s, out, want)
			}
		}
		if tmpl.usesSecrets() && len(r.secretVals) == 0 {
			t.Fatalf("%q uses a secret but none was recorded for scrubbing", s)
		}
		for _, v := range r.secretVals {
			if v != value {
				t.Fatalf("%q: recorded secret %q, the provider gave %q", s, v, value)
			}
		}
	})
}
