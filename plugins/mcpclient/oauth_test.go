package mcpclient

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/internal/oauthtest"
	"github.com/cordisgo/harness/mcpauth"
	"github.com/cordisgo/harness/secrets"
)

// oauthEnv is a real authorization server (oidc-provider) and a go-sdk MCP server behind
// auth.RequireBearerToken.
func oauthEnv(t *testing.T) (*oauthtest.Provider, *oauthtest.Server) {
	t.Helper()
	srv := oauthtest.ReserveServer()
	p := oauthtest.Start(t, oauthtest.Config{
		Clients:   []oauthtest.Client{oauthtest.IntrospectorClient()},
		Resources: map[string]oauthtest.Resource{srv.URL: {Scope: "mcp:read"}},
	})
	oauthtest.NewServer(t, p, srv, oauthtest.ServerOptions{Scopes: []string{"mcp:read"}})
	return p, srv
}

func oauthConfig(url string) Config {
	var c Config
	c.Default()
	c.ServerName, c.Transport, c.URL = "hosted", TransportStreamableHTTP, url
	return c
}

// login logs in to cfg's server as a person would (oauthtest.Browse plays the browser),
// storing the token in store, and returns the Authorizer that did it.
func login(cx context.Context, t *testing.T, cfg Config, store mcpauth.Store) *mcpauth.Authorizer {
	t.Helper()
	opts := cfg.AuthOptions(store)
	opts.OpenURL = oauthtest.Browse
	a, err := mcpauth.New(opts)
	must(t, err)
	must(t, a.Login(cx))
	return a
}

// A server that needs a login reports needs-auth (with the login hint), spends no
// reconnect budget, and connects as soon as a login is stored in this process (the path of
// `mcp login` through a running host), without a restart. No token reaches a status.
func TestNeedsAuthThenLoginWithoutRestart(t *testing.T) {
	_, srv := oauthEnv(t)
	e := newEnv(t)
	store := &mcpauth.MemoryStore{}
	cfg := oauthConfig(srv.URL)
	e.mount(nil, cfg, &hooks{tune: func(o *dialOptions) { o.authStore = store }})
	st := e.st.waitPhase(t, "hosted", PhaseNeedsAuth)
	if st.AuthHint != "harness mcp login hosted" || !strings.Contains(st.Err, "harness mcp login hosted") || st.Attempt != 0 {
		t.Fatalf("needs-auth status %+v", st)
	}
	for _, p := range e.st.phases("hosted") {
		if p == PhaseReconnecting || p == PhaseFailed {
			t.Fatalf("a server waiting for a login went %s: %v", p, e.st.phases("hosted"))
		}
	}
	// The tools fail fast with the hint meanwhile? There are none: nothing registered.
	if names := e.names(nil); len(names) != 0 {
		t.Fatalf("tools before login: %v", names)
	}

	lcx, cancel := context.WithTimeout(context.Background(), ctxtest.Timeout)
	defer cancel()
	a := login(lcx, t, cfg, store)
	e.st.waitPhase(t, "hosted", PhaseConnected)
	res := e.mustCall(nil, PublicToolName("hosted", "whoami"), "")
	if !strings.Contains(res.Text(), "user=alice") {
		t.Fatalf("whoami = %q", res.Text())
	}
	rec, _ := store.Load(lcx, a.Key())
	b, _ := json.Marshal(e.st.all())
	for _, secret := range []string{rec.Token.AccessToken, rec.Token.RefreshToken} {
		if strings.Contains(string(b), secret) || strings.Contains(e.log.String(), secret) {
			t.Fatal("a token leaked into a status report or the log")
		}
	}
}

// mcp probe classifies a missing login as its own stage, and succeeds with the stored token.
func TestProbeAuthorizeStage(t *testing.T) {
	_, srv := oauthEnv(t)
	store := &mcpauth.MemoryStore{}
	cfg := oauthConfig(srv.URL)
	pcx, cancel := context.WithTimeout(context.Background(), ctxtest.Timeout)
	defer cancel()
	res := Probe(pcx, cfg, ProbeOptions{Credentials: store})
	if res.Stage != ProbeAuthorize || !strings.Contains(res.Err, "harness mcp login hosted") {
		t.Fatalf("probe without login: stage %q err %q", res.Stage, res.Err)
	}
	a := login(pcx, t, cfg, store)
	res = Probe(pcx, cfg, ProbeOptions{Credentials: store})
	if !res.OK() || len(res.Tools) != 1 {
		t.Fatalf("probe after login: %+v", res)
	}
	rec, _ := store.Load(pcx, a.Key())
	b, _ := json.Marshal(res)
	if strings.Contains(string(b), rec.Token.AccessToken) {
		t.Fatal("the probe result carries the token")
	}
}

// The oauth block's credentials take ${VAR} references; they are masked in the redacted
// form and in reports.
func TestOAuthConfigReferencesAndRedaction(t *testing.T) {
	cfg := oauthConfig("https://mcp.example.com/mcp")
	cfg.OAuth = OAuthConfig{Grant: mcpauth.GrantClientCredentials, ClientID: "svc", ClientSecret: "${SVC_SECRET}"}
	out, err := cfg.Expand(&secrets.Resolver{LookupEnv: func(k string) (string, bool) {
		return "s3cr3t-value-from-env", k == "SVC_SECRET"
	}})
	must(t, err)
	if out.OAuth.ClientSecret != "s3cr3t-value-from-env" {
		t.Fatalf("clientSecret = %q", out.OAuth.ClientSecret)
	}
	must(t, out.Validate())
	if s := out.String(); strings.Contains(s, "s3cr3t") {
		t.Fatalf("String leaks the secret: %s", s)
	}
	if got := secretScrubber(out).Replace("failed with s3cr3t-value-from-env"); strings.Contains(got, "s3cr3t") {
		t.Fatalf("scrubber kept the secret: %s", got)
	}
	bad := oauthConfig("https://mcp.example.com/mcp")
	bad.OAuth = OAuthConfig{Grant: "password", RedirectPort: 70000, ClientMetadataURL: "http://x/y"}
	err = bad.Validate()
	for _, key := range []string{"oauth.grant", "oauth.redirectPort", "oauth.clientMetadataUrl"} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("validation error %v does not name %s", err, key)
		}
	}
}

// A login stored by another process (not announced in this one: written to the store
// directly) is found at a re-check, and the client connects; re-checks that find nothing
// report nothing new.
func TestNeedsAuthFindsLoginOfAnotherProcess(t *testing.T) {
	_, srv := oauthEnv(t)
	e := newEnv(t)
	store := &mcpauth.MemoryStore{}
	cfg := oauthConfig(srv.URL)
	e.mount(nil, cfg, &hooks{tune: func(o *dialOptions) { o.authStore, o.authRecheck = store, 20*time.Millisecond }})
	e.st.waitPhase(t, "hosted", PhaseNeedsAuth)

	other := &mcpauth.MemoryStore{} // "another process": its own store and Authorizer
	lcx, cancel := context.WithTimeout(context.Background(), ctxtest.Timeout)
	defer cancel()
	a := login(lcx, t, cfg, other)
	rec, err := other.Load(lcx, a.Key())
	must(t, err)
	must(t, mcpauth.Save(lcx, store, a.Key(), rec)) // the shared file, written elsewhere

	e.st.waitPhase(t, "hosted", PhaseConnected)
	n := 0
	for _, p := range e.st.phases("hosted") {
		if p == PhaseNeedsAuth {
			n++
		}
	}
	// Once at first, and once more after the in-process login of the "other process"
	// (same key) woke the client early; the re-checks in between add nothing.
	if n > 2 || srv.Rejects() < n {
		t.Fatalf("needs-auth reported %d times for %d refusals: %v", n, srv.Rejects(), e.st.phases("hosted"))
	}
}
