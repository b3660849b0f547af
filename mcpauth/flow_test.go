package mcpauth_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/cordisgo/harness/internal/oauthtest"
	"github.com/cordisgo/harness/mcpauth"
)

// Behaviours 1-3: discovery from the 401, dynamic registration stored and reused, the
// authorization code flow with PKCE through $BROWSER, the resource parameter in both
// requests, and a token the MCP server accepts (its audience is the server).
func TestLoginWithDynamicRegistration(t *testing.T) {
	e := newEnv(t, oauthtest.Config{}, oauthtest.ServerOptions{Scopes: []string{"mcp:read"}, ScopesSupported: []string{"mcp:read", "mcp:write"}})
	useTestBrowser(t)
	cx := testCtx(t)
	store := fileStore(t)
	a, err := mcpauth.New(mcpauth.Options{ServerName: "demo", ServerURL: e.srv.URL, Store: store, Interactive: true})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, cx, a, e.srv.URL)
	if got := whoami(t, cx, cs); !strings.Contains(got, "user=alice") || !strings.Contains(got, "mcp:read") {
		t.Fatalf("whoami = %q, want alice with mcp:read", got)
	}
	rec, err := store.Load(cx, a.Key())
	if err != nil || rec == nil {
		t.Fatalf("stored record: %v %v", rec, err)
	}
	if rec.Client == nil || rec.Client.Kind != mcpauth.KindDynamic || rec.Client.ID == "" {
		t.Fatalf("client = %+v, want a dynamic registration", rec.Client)
	}
	if rec.Token == nil || rec.Token.RefreshToken == "" {
		t.Fatalf("token %v: want a refresh token (offline_access)", rec.Token)
	}
	if rec.Resource != e.srv.URL || rec.Issuer != e.p.Issuer {
		t.Fatalf("record resource %q issuer %q", rec.Resource, rec.Issuer)
	}
	// RFC 8707: the token request named the resource.
	var codeReqs int
	for _, tr := range e.p.TokenRequests() {
		if tr.Grant == "authorization_code" {
			codeReqs++
			if tr.Resource != e.srv.URL {
				t.Errorf("token request resource = %q, want %q", tr.Resource, e.srv.URL)
			}
		}
	}
	if codeReqs != 1 {
		t.Fatalf("%d authorization_code requests, want 1", codeReqs)
	}
	// The file is private.
	fi, err := os.Stat(store.Path())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file mode %v (%v), want 0600", fi.Mode(), err)
	}
	b, _ := os.ReadFile(store.Path())
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("credentials file is not JSON: %v", err)
	}
	// Tokens never appear in the record's printed forms.
	for _, s := range []string{rec.String(), rec.Token.String()} {
		if strings.Contains(s, rec.Token.AccessToken) || strings.Contains(s, rec.Token.RefreshToken) {
			t.Fatalf("printed record leaks a token: %s", s)
		}
	}

	// A restart (a new Authorizer on the same store) reuses the token: no browser.
	t.Setenv("BROWSER", "/nonexistent-browser")
	a2, err := mcpauth.New(mcpauth.Options{ServerName: "demo", ServerURL: e.srv.URL, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	cs2 := connect(t, cx, a2, e.srv.URL)
	whoami(t, cx, cs2)

	// A second login reuses the stored registration (the same client ID).
	reg := rec.Client.ID
	opener := &countingOpener{}
	e.login(t, cx, store, opener)
	rec3, _ := store.Load(cx, a.Key())
	if rec3.Client.ID != reg || opener.n != 1 {
		t.Fatalf("second login: client %q (want the stored %q), %d browser opens", rec3.Client.ID, reg, opener.n)
	}
}
