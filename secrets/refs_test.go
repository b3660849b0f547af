package secrets

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTemplates(t *testing.T) {
	env := map[string]string{"HOME": "/home/u", "EMPTY": "", "TOKEN": "tok-123456789"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	creds := credFunc(func(name string) (string, error) {
		if name == "gh" {
			return "ghp_secretvalue", nil
		}
		return "", ErrSecretNotFound
	})
	cases := []struct{ in, want, err string }{
		{"plain", "plain", ""},
		{"$HOME stays", "$HOME stays", ""},
		{"${HOME}/src", "/home/u/src", ""},
		{"${MISSING:-dflt}", "dflt", ""},
		{"${EMPTY:-dflt}", "dflt", ""},
		{"${EMPTY}", "", ""},
		{"${MISSING:-}", "", ""},
		{"Bearer ${secret:gh}", "Bearer ghp_secretvalue", ""},
		{"$${HOME} is literal", "${HOME} is literal", ""},
		{"a${HOME}b${TOKEN}c", "a/home/ub" + "tok-123456789c", ""},
		{"${MISSING}", "", "${MISSING}: environment variable is not set"},
		{"${secret:nope}", "", "${secret:nope}: secret not found"},
	}
	for _, c := range cases {
		tm, err := parseTemplate(c.in)
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		r := &Resolver{LookupEnv: lookup, Secrets: func() (Credentials, error) { return creds, nil }}
		got, err := r.expand(tm)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("%q: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Fatalf("%q → %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"${", "${HOME", "${}", "${1X}", "${A-B}", "${secret:}", "${secret:a b}", "${A:-${B}}"} {
		if _, err := parseTemplate(bad); err == nil {
			t.Fatalf("%q parsed", bad)
		}
	}
	// Without a credentials provider, a secret reference fails clearly.
	tm, _ := parseTemplate("${secret:gh}")
	r := &Resolver{LookupEnv: lookup, Secrets: func() (Credentials, error) { return nil, ErrNoCredentials }}
	if _, err := r.expand(tm); !errors.Is(err, ErrNoCredentials) {
		t.Fatalf("no provider: %v", err)
	}
}

type credFunc func(string) (string, error)

func (f credFunc) Lookup(name string) (string, error) { return f(name) }

func TestFileCredentials(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "credentials.yaml")
	const secret = "s3cr3t-value-xyz"
	fc := NewFileCredentials(path)
	if _, err := fc.Lookup("a"); !errors.Is(err, ErrNoCredentials) {
		t.Fatalf("missing file: %v", err)
	}
	if err := os.WriteFile(path, []byte("a: "+secret+"\nnum: 12\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := fc.Lookup("a"); err == nil || !strings.Contains(err.Error(), "must be 0600") {
		t.Fatalf("mode 0644 accepted: %v", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if v, err := fc.Lookup("a"); err != nil || v != secret {
		t.Fatalf("lookup: %q %v", v, err)
	}
	if v, err := fc.Lookup("num"); err != nil || v != "12" {
		t.Fatalf("number: %q %v", v, err)
	}
	if _, err := fc.Lookup("b"); !errors.Is(err, ErrSecretNotFound) {
		t.Fatalf("absent secret: %v", err)
	}
	// Malformed files: errors carry lines, never values.
	for _, bad := range []string{"a: [" + secret + "]\n", "- " + secret + "\n", "a: " + secret + "\na: x\n", "a: \"" + secret + "\n", "a: {b: " + secret + "}\n"} {
		if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := fc.Lookup("a")
		if err == nil || strings.Contains(err.Error(), secret) {
			t.Fatalf("%q: %v", bad, err)
		}
	}
}
