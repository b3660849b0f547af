package mcpauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/cordisgo/harness/internal/oauthtest"
	"github.com/cordisgo/harness/mcpauth"
)

// Issue 23 item 1: a server that answers initialize without a token and challenges only
// later requests, with its protected-resource metadata at a location only the challenge
// names. The live client's challenge is stored and the login starts from it; a login with
// nothing stored runs a real MCP exchange (initialize, tools/list) to get the challenge,
// where a GET would have found nothing.
func TestLoginStartsFromTheFirstRealRequest(t *testing.T) {
	e := newEnv(t, oauthtest.Config{}, oauthtest.ServerOptions{Scopes: []string{"mcp:read"},
		MetadataPath: "/custom/metadata.json", OpenInitialize: true})
	cx := testCtx(t)
	store := &mcpauth.MemoryStore{}
	live, _ := mcpauth.New(mcpauth.Options{ServerName: "demo", ServerURL: e.srv.URL, Store: store})
	cs := connect(t, cx, live, e.srv.URL) // initialize is open
	_, err := cs.CallTool(cx, &mcp.CallToolParams{Name: "whoami"})
	if !errors.Is(err, mcpauth.ErrNeedsAuth) {
		t.Fatalf("tools/call without a login: %v, want needs-auth", err)
	}
	rec, _ := store.Load(cx, live.Key())
	if rec == nil || rec.Challenge == nil || rec.Challenge.ResourceMetadata != e.srv.MetadataURL {
		t.Fatalf("stored challenge %+v, want resource_metadata %s", rec, e.srv.MetadataURL)
	}

	e.login(t, cx, store, nil)
	if rec, _ := store.Load(cx, live.Key()); rec.Challenge != nil || rec.Token == nil {
		t.Fatalf("after the login: %v challenge %+v", rec, rec.Challenge)
	}
	if got := whoami(t, cx, cs); !strings.Contains(got, "mcp:read") {
		t.Fatalf("the live session after the login: %q", got)
	}

	// Nothing stored: the login's own exchange meets the challenge.
	e.login(t, cx, &mcpauth.MemoryStore{}, nil)
}

// Issue 23 item 2: a client that may not open a browser meets 403 insufficient_scope: it
// reports needs-auth naming the scope, and the login that follows asks for the union of the
// granted and the challenged scopes, so following the hint converges (one login, not a loop).
func TestStepUpConvergesThroughLogin(t *testing.T) {
	e := newEnv(t, oauthtest.Config{}, oauthtest.ServerOptions{Scopes: []string{"mcp:read"}})
	cx := testCtx(t)
	store := &mcpauth.MemoryStore{}
	opener := &countingOpener{}
	login := e.login(t, cx, store, opener)
	live, _ := mcpauth.New(mcpauth.Options{ServerName: "demo", ServerURL: e.srv.URL, Store: store})
	cs := connect(t, cx, live, e.srv.URL)
	e.srv.RequireScopes("mcp:read", "mcp:write")
	_, err := cs.CallTool(cx, &mcp.CallToolParams{Name: "whoami"})
	var na *mcpauth.NeedsAuthError
	if !errors.As(err, &na) || !strings.Contains(na.Reason, "mcp:write") {
		t.Fatalf("403 insufficient_scope without a browser: %v, want needs-auth naming mcp:write", err)
	}
	if err := login.Login(cx); err != nil {
		t.Fatal(err)
	}
	rec, _ := store.Load(cx, live.Key())
	if !slices.Contains(rec.Scopes, "mcp:read") || !slices.Contains(rec.Scopes, "mcp:write") {
		t.Fatalf("granted %v after the step-up login, want mcp:read and mcp:write", rec.Scopes)
	}
	if got := whoami(t, cx, cs); !strings.Contains(got, "mcp:write") || opener.n != 2 {
		t.Fatalf("after the step-up login: %q with %d logins, want mcp:write and 2 logins", got, opener.n)
	}
}

// Issue 23 item 3: a 2025-03-26 server (no protected-resource metadata) publishes its
// authorization server's metadata at its origin with an issuer that has a path, as that
// era's servers did. It is accepted there; an issuer on another origin is not, and neither
// is the same document behind protected-resource metadata (the current check).
func TestDiscoverLegacyIssuerWithPath(t *testing.T) {
	var issuer string
	var withPRM bool
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&oauthex.AuthServerMeta{Issuer: issuer,
			AuthorizationEndpoint: srv.URL + "/oauth/authorize", TokenEndpoint: srv.URL + "/oauth/token",
			RegistrationEndpoint: srv.URL + "/oauth/register", CodeChallengeMethodsSupported: []string{"S256"}})
	})
	prm := auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{Resource: srv.URL + "/mcp", AuthorizationServers: []string{srv.URL}})
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		if !withPRM {
			http.NotFound(w, r)
			return
		}
		prm.ServeHTTP(w, r)
	})
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	cx := context.Background()

	issuer = srv.URL + "/oauth"
	md, err := mcpauth.Discover(cx, hc, srv.URL+"/mcp", nil)
	if err != nil || md.AS.Issuer != issuer || md.Defaulted || md.AS.TokenEndpoint != srv.URL+"/oauth/token" {
		t.Fatalf("2025-03-26 metadata with issuer %s: %+v %v", issuer, md, err)
	}
	issuer = "http://elsewhere.invalid/oauth"
	if _, err := mcpauth.Discover(cx, hc, srv.URL+"/mcp", nil); err == nil || !strings.Contains(err.Error(), "not on the server's origin") {
		t.Fatalf("an issuer on another origin: %v, want it refused", err)
	}
	issuer, withPRM = srv.URL+"/oauth", true
	if _, err := mcpauth.Discover(cx, hc, srv.URL+"/mcp", nil); err == nil || !strings.Contains(err.Error(), "does not match issuer") {
		t.Fatalf("a current server's metadata with another issuer: %v, want the RFC 8414 check", err)
	}
}

// Issue 23 item 5: protected-resource metadata that names another resource is reported as
// such, before any registration or authorization request.
func TestResourceMismatchIsReported(t *testing.T) {
	e := newEnv(t, oauthtest.Config{}, oauthtest.ServerOptions{Scopes: []string{"mcp:read"}, MetadataResource: "https://evil.example.com/mcp"})
	cx := testCtx(t)
	opener := &countingOpener{}
	a, _ := mcpauth.New(mcpauth.Options{ServerName: "demo", ServerURL: e.srv.URL, OpenURL: opener.open})
	err := a.Login(cx)
	if !errors.Is(err, mcpauth.ErrResourceMismatch) || !strings.Contains(err.Error(), e.srv.MetadataURL) || opener.n != 0 {
		t.Fatalf("login against mismatched metadata: %v (%d browser opens), want ErrResourceMismatch naming %s", err, opener.n, e.srv.MetadataURL)
	}
}

// Issue 23 item 6: dynamic registration uses the token endpoint authentication method (and
// the secret) the authorization server assigns, not the one the client asked for.
func TestRegistrationUsesAssignedAuthMethod(t *testing.T) {
	e := newEnv(t, oauthtest.Config{AssignAuthMethod: mcpauth.AuthClientSecretPost}, oauthtest.ServerOptions{Scopes: []string{"mcp:read"}})
	cx := testCtx(t)
	store := &mcpauth.MemoryStore{}
	a := e.login(t, cx, store, nil)
	rec, _ := store.Load(cx, a.Key())
	if rec.Client.AuthMethod != mcpauth.AuthClientSecretPost || rec.Client.Secret == "" {
		t.Fatalf("client %s method %q secret %t, want the assigned client_secret_post with its secret", rec.Client.Kind, rec.Client.AuthMethod, rec.Client.Secret != "")
	}
	// The refresh authenticates the same way.
	live, _ := mcpauth.New(mcpauth.Options{ServerName: "demo", ServerURL: e.srv.URL, Store: store})
	e.srv.Refuse(rec.Token.AccessToken)
	if got := whoami(t, cx, connect(t, cx, live, e.srv.URL)); !strings.Contains(got, "mcp:read") {
		t.Fatalf("after a refresh: %q", got)
	}
}

// Issue 38 item 7: a client that may not start a login itself, but may now (a person is
// there to open the page: Options.StepUp), meets 403 insufficient_scope: it re-authorizes in
// band with the union of the scopes and the call succeeds; when StepUp says no, the login
// hint stays. A 403 asking only for scopes the token was granted starts no login at all.
func TestStepUpInBand(t *testing.T) {
	e := newEnv(t, oauthtest.Config{}, oauthtest.ServerOptions{Scopes: []string{"mcp:read"}})
	cx := testCtx(t)
	store := &mcpauth.MemoryStore{}
	opener := &countingOpener{}
	e.login(t, cx, store, opener)
	var browser atomic.Bool
	live, _ := mcpauth.New(mcpauth.Options{ServerName: "demo", ServerURL: e.srv.URL, Store: store, OpenURL: opener.open,
		StepUp: func(context.Context) bool { return browser.Load() }})
	cs := connect(t, cx, live, e.srv.URL)
	e.srv.RequireScopes("mcp:read", "mcp:write")
	if _, err := cs.CallTool(cx, &mcp.CallToolParams{Name: "whoami"}); !errors.Is(err, mcpauth.ErrNeedsAuth) || opener.n != 1 {
		t.Fatalf("without a browser: %v after %d logins, want needs-auth and no login", err, opener.n)
	}
	browser.Store(true)
	if got := whoami(t, cx, cs); !strings.Contains(got, "mcp:write") || opener.n != 2 {
		t.Fatalf("with a browser: %q after %d logins, want mcp:write and one more login", got, opener.n)
	}
	// The server now wants mcp:write on a token that has it, and keeps refusing: no login.
	e.srv.Disregard("mcp:write")
	_, err := cs.CallTool(cx, &mcp.CallToolParams{Name: "whoami"})
	var ae *mcpauth.AuthError
	if !errors.As(err, &ae) || ae.Step != "step-up" || opener.n != 2 {
		t.Fatalf("a refusal of granted scopes: %v after %d logins, want a step-up error and no login", err, opener.n)
	}
}
