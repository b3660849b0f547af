package mcpclient

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx"
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

// A configuration mounted directly (a profile row) has its references resolved at mount:
// the dialled configuration holds the values, the scope's configuration keeps the
// references as written, secret values are masked, and a missing variable fails the
// activation naming the key and the reference.
func TestExpandAtMount(t *testing.T) {
	t.Setenv("HARNESS_TEST_DIR", "/srv/data")
	t.Setenv("HARNESS_TEST_API_TOKEN", "tok-from-env-123456")
	e := newEnv(t)
	if _, err := CredentialsKey.Provide(e.root, Credentials(credFunc(func(name string) (string, error) {
		if name == "ev" {
			return "ev-secret-value-987", nil
		}
		return "", ErrSecretNotFound
	}))); err != nil {
		t.Fatal(err)
	}
	ms := newMemServer(demo())
	var dialled Config
	dial := func(cx context.Context, cfg Config, opts dialOptions) (*connection, error) {
		dialled = cfg
		return ms.dial(cx, cfg, opts)
	}
	cfg := memConfig("exp")
	cfg.Command = "${HARNESS_TEST_CMD:-my-server}"
	cfg.Args = []string{"--root=${HARNESS_TEST_DIR}", "--token=${HARNESS_TEST_API_TOKEN}", "$${literal}"}
	cfg.Env = map[string]string{"EV_TOKEN": "${secret:ev}"}
	s := e.mount(nil, cfg, &hooks{dial: dial})
	if s.State() != ctx.Active {
		t.Fatalf("state %v: %v", s.State(), s.Err())
	}
	if dialled.Command != "my-server" || !slices.Equal(dialled.Args, []string{"--root=/srv/data", "--token=tok-from-env-123456", "${literal}"}) || dialled.Env["EV_TOKEN"] != "ev-secret-value-987" {
		t.Fatalf("dialled %+v", dialled)
	}
	if !slices.Contains(dialled.Secrets, "ev-secret-value-987") || !slices.Contains(dialled.Secrets, "tok-from-env-123456") || slices.Contains(dialled.Secrets, "/srv/data") {
		t.Errorf("secrets to mask %q: want the secret and the token variable, not the directory", dialled.Secrets)
	}
	written, _ := Plugin.Config(s)
	if written.Env["EV_TOKEN"] != "${secret:ev}" || written.Args[0] != "--root=${HARNESS_TEST_DIR}" {
		t.Errorf("scope config %+v: want the references as written", written)
	}
	if strings.Contains(written.String(), "ev-secret-value") {
		t.Errorf("shown config leaks the secret: %s", written)
	}

	bad := memConfig("bad")
	bad.Args = []string{"${HARNESS_TEST_UNSET_VAR}"}
	s = e.mount(nil, bad, &hooks{dial: newMemServer(demo()).dial})
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), `mcp server "bad": key "args[0]": ${HARNESS_TEST_UNSET_VAR}: environment variable is not set`) {
		t.Fatalf("missing variable: %v", err)
	}

	// A malformed reference is a configuration problem, found before anything mounts.
	_, err := Plugin.DecodeConfig(map[string]any{"serverName": "x", "transport": "streamable-http", "url": "https://h/${UNCLOSED"})
	if err == nil || !strings.Contains(err.Error(), `key "url": "${" without a closing "}"`) {
		t.Fatalf("malformed reference: %v", err)
	}
	// A URL made of references is checked once resolved.
	if _, err := Plugin.DecodeConfig(map[string]any{"serverName": "x", "transport": "streamable-http", "url": "${MCP_URL}"}); err != nil {
		t.Fatalf("url reference: %v", err)
	}
}
