package mcpmanager

import (
	"slices"
	"strings"
	"testing"

	"github.com/cordisgo/harness/secrets"
)

func TestParseSettings(t *testing.T) {
	doc := `
servers:
  zeta:
    transport: stdio
    command: zeta-server
  alpha:
    enabled: false
    transport: streamable-http
    url: https://example.com/mcp
    headers: {Authorization: "Bearer ${secret:alpha}"}
  mid:
    transport: stdio
    command: npx
    args: ["-y", "pkg", "${HOME}/src"]
    reconnect: {maxAttempts: 3}
    deniedTools: [delete_file]
`
	entries, err := parseSettings("s.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.name)
	}
	if !slices.Equal(got, []string{"zeta", "alpha", "mid"}) {
		t.Fatalf("order %v: want document order", got)
	}
	if !entries[0].enabled || entries[1].enabled {
		t.Fatalf("enabled: %v %v", entries[0].enabled, entries[1].enabled)
	}
	if entries[2].cfg.ServerName != "mid" || entries[2].cfg.Reconnect.MaxAttempts != 3 || entries[2].cfg.Reconnect.MaxDelayMs != 30_000 {
		t.Fatalf("mid decoded as %+v: want serverName from the key, defaults merged", entries[2].cfg)
	}
	if entries[2].cfg.Allows("delete_file") || !entries[2].cfg.Allows("read_file") {
		t.Fatalf("mid's deniedTools not applied: %v", entries[2].cfg.DeniedTools)
	}
	if entries[0].static() != true || entries[2].static() {
		t.Fatal("static: zeta has no template, mid has one")
	}

	// The same document decodes to the same keys; a changed field changes only its entry.
	again, _ := parseSettings("s.yaml", []byte(strings.Replace(doc, "maxAttempts: 3", "maxAttempts: 4", 1)))
	if again[0].key != entries[0].key || again[1].key != entries[1].key || again[2].key == entries[2].key {
		t.Fatal("keys: only mid changed")
	}
}

func TestResolveScrubsAndNamesKeys(t *testing.T) {
	entries, err := parseSettings("s.yaml", []byte(`servers:
  gh:
    transport: streamable-http
    url: "https://api.example.com/${PATHPART}"
    headers: {Authorization: "Bearer ${secret:gh}", X-Plain: "${PLAIN}"}
`))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PATHPART": "mcp", "PLAIN": "some-plain-header"}
	r := &secrets.Resolver{
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Secrets: func() (secrets.Credentials, error) {
			return credFunc(func(string) (string, error) { return "ghp_0123456789", nil }), nil
		},
	}
	res, err := entries[0].resolve(r)
	if err != nil {
		t.Fatal(err)
	}
	if res.cfg.Headers["Authorization"] != "Bearer ghp_0123456789" || res.cfg.URL != "https://api.example.com/mcp" {
		t.Fatalf("resolved %+v", res.cfg)
	}
	if entries[0].cfg.Headers["Authorization"] != "Bearer ${secret:gh}" {
		t.Fatal("resolution changed the entry")
	}
	text := res.scrub.Replace("401 for Bearer ghp_0123456789 with some-plain-header")
	if strings.Contains(text, "ghp_0123456789") || strings.Contains(text, "some-plain-header") {
		t.Fatalf("not scrubbed: %q", text)
	}
	// A missing variable names the server and the key.
	delete(env, "PATHPART")
	_, err = entries[0].resolve(r)
	if err == nil || !strings.Contains(err.Error(), `mcp server "gh": key "url": ${PATHPART}`) {
		t.Fatalf("missing variable: %v", err)
	}
}

type credFunc func(string) (string, error)

func (f credFunc) Lookup(name string) (string, error) { return f(name) }
