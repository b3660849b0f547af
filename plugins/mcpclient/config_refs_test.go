package mcpclient

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/secrets"
)

type credFunc func(string) (string, error)

func (f credFunc) Lookup(name string) (string, error) { return f(name) }

// A configuration mounted directly (a profile row) has its references resolved at mount:
// the dialled configuration holds the values, the scope's configuration keeps the
// references as written, secret values are masked, and a missing variable fails the
// activation naming the key and the reference.
func TestExpandAtMount(t *testing.T) {
	t.Setenv("HARNESS_TEST_DIR", "/srv/data")
	t.Setenv("HARNESS_TEST_API_TOKEN", "tok-from-env-123456")
	e := newEnv(t)
	if _, err := secrets.CredentialsKey.Provide(e.root, secrets.Credentials(credFunc(func(name string) (string, error) {
		if name == "ev" {
			return "ev-secret-value-987", nil
		}
		return "", secrets.ErrSecretNotFound
	}))); err != nil {
		t.Fatal(err)
	}
	host := new(secrets.Scrubber) // the host's: the secrets only, not every value resolved
	if _, err := secrets.ScrubberKey.Provide(e.root, host); err != nil {
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
	cfg.Env = map[string]string{"EV_TOKEN": "${secret:ev}", "GITHUB_TOKEN": "ghp_literalValue42", "LOG_FORMAT": "structured-json"}
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
	if got, want := host.Values(), []string{"ev-secret-value-987", "tok-from-env-123456", "ghp_literalValue42"}; !slices.Equal(got, want) {
		t.Errorf("host scrubber %q, want %q", got, want)
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
