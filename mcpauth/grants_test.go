package mcpauth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/cordisgo/harness/internal/oauthtest"
	"github.com/cordisgo/harness/mcpauth"
)

// Behaviour 4: a 403 insufficient_scope re-authorizes with the union of the scopes and
// retries; a server that keeps refusing gets at most three re-authorizations.
func TestStepUp(t *testing.T) {
	e := newEnv(t, oauthtest.Config{}, oauthtest.ServerOptions{Scopes: []string{"mcp:read"}})
	cx := testCtx(t)
	store := &mcpauth.MemoryStore{}
	opener := &countingOpener{}
	a, _ := mcpauth.New(mcpauth.Options{ServerName: "demo", ServerURL: e.srv.URL, Store: store, Interactive: true, OpenURL: opener.open})
	cs := connect(t, cx, a, e.srv.URL)
	if got := whoami(t, cx, cs); strings.Contains(got, "mcp:write") {
		t.Fatalf("first token already has mcp:write: %q", got)
	}
	e.srv.RequireScopes("mcp:read", "mcp:write")
	got := whoami(t, cx, cs)
	if !strings.Contains(got, "mcp:read") || !strings.Contains(got, "mcp:write") || opener.n != 2 {
		t.Fatalf("after step-up: %q with %d logins, want both scopes and 2 logins", got, opener.n)
	}
	rec, _ := store.Load(cx, a.Key())
	if rec.Token.RefreshToken == "" {
		t.Fatal("step-up lost offline_access")
	}

	// The provider never grants mcp:admin: three step-ups, then the 403 stands.
	e.srv.RequireScopes("mcp:read", "mcp:admin")
	_, err := cs.CallTool(cx, &mcp.CallToolParams{Name: "whoami"})
	if err == nil {
		t.Fatal("call succeeded without mcp:admin")
	}
	if opener.n != 2+mcpauth.MaxStepUps {
		t.Fatalf("%d logins, want %d (three step-ups)", opener.n, 2+mcpauth.MaxStepUps)
	}
}

// Behaviour 4: scopes come from the challenge, else the resource's scopes_supported; with
// neither none are sent (offline_access aside).
func TestScopeSelection(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      oauthtest.ServerOptions
		want, not string
	}{
		{"challenge", oauthtest.ServerOptions{Scopes: []string{"mcp:write"}, ScopesSupported: []string{"mcp:read"}}, "mcp:write", "mcp:read"},
		{"scopes_supported", oauthtest.ServerOptions{ScopesSupported: []string{"mcp:read"}}, "mcp:read", "mcp:write"},
		{"none", oauthtest.ServerOptions{}, "", "mcp:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, oauthtest.Config{}, tc.opts)
			cx := testCtx(t)
			var authURL string
			a, _ := mcpauth.New(mcpauth.Options{ServerName: "demo", ServerURL: e.srv.URL,
				OpenURL: func(cx2 context.Context, u string) error { authURL = u; return oauthtest.Browse(cx2, u) }})
			if err := a.Login(cx); err != nil {
				t.Fatal(err)
			}
			scope := queryParam(t, authURL, "scope")
			if tc.want != "" && !strings.Contains(scope, tc.want) || strings.Contains(scope, tc.not) {
				t.Fatalf("requested scope %q, want %q and not %q", scope, tc.want, tc.not)
			}
			if !strings.Contains(scope, "offline_access") {
				t.Fatalf("requested scope %q lacks offline_access", scope)
			}
			if got := queryParam(t, authURL, "resource"); got != e.srv.URL {
				t.Fatalf("authorization request resource = %q, want %q", got, e.srv.URL)
			}
			if queryParam(t, authURL, "code_challenge_method") != "S256" || queryParam(t, authURL, "code_challenge") == "" {
				t.Fatal("no PKCE S256 challenge")
			}
		})
	}
}

// Behaviours 2-3: a pre-registered client (with client_secret_post, and with
// client_secret_basic chosen from the metadata) wins over dynamic registration.
func TestPreregisteredClient(t *testing.T) {
	for _, method := range []string{mcpauth.AuthClientSecretPost, mcpauth.AuthClientSecretBasic} {
		t.Run(method, func(t *testing.T) {
			client := oauthtest.Client{"client_id": "pre-" + method, "client_secret": "pre-secret-" + method,
				"redirect_uris": []string{"http://127.0.0.1/callback"}, "application_type": "native",
				"grant_types": []string{"authorization_code", "refresh_token"}, "token_endpoint_auth_method": method}
			e := newEnv(t, oauthtest.Config{Clients: []oauthtest.Client{client}}, oauthtest.ServerOptions{Scopes: []string{"mcp:read"}})
			cx := testCtx(t)
			store := &mcpauth.MemoryStore{}
			opts := mcpauth.Options{ServerName: "demo", ServerURL: e.srv.URL, Store: store, Interactive: true,
				ClientID: "pre-" + method, ClientSecret: "pre-secret-" + method, OpenURL: (&countingOpener{}).open}
			if method == mcpauth.AuthClientSecretPost {
				opts.AuthMethod = method
			}
			a, err := mcpauth.New(opts)
			if err != nil {
				t.Fatal(err)
			}
			whoami(t, cx, connect(t, cx, a, e.srv.URL))
			rec, _ := store.Load(cx, a.Key())
			if rec.Client.Kind != mcpauth.KindPreregistered || rec.Client.AuthMethod != method || a.Key().Client != "pre-"+method {
				t.Fatalf("client %+v key %v", rec.Client, a.Key())
			}
		})
	}
}

// Behaviour 5: the client credentials grant with client_secret_basic, and with
// private_key_jwt signed ES256 and RS256 from PEM key files.
func TestClientCredentials(t *testing.T) {
	dir := t.TempDir()
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	ecDER, _ := x509.MarshalECPrivateKey(ecKey)
	rsaDER, _ := x509.MarshalPKCS8PrivateKey(rsaKey)
	ecFile, rsaFile := filepath.Join(dir, "ec.pem"), filepath.Join(dir, "rsa.pem")
	_ = os.WriteFile(ecFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ecDER}), 0o600)
	_ = os.WriteFile(rsaFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: rsaDER}), 0o600)
	b64 := base64.RawURLEncoding.EncodeToString
	m2m := func(id string, extra oauthtest.Client) oauthtest.Client {
		c := oauthtest.Client{"client_id": id, "grant_types": []string{"client_credentials"}, "response_types": []string{},
			"redirect_uris": []string{}}
		for k, v := range extra {
			c[k] = v
		}
		return c
	}
	clients := []oauthtest.Client{
		m2m("m2m-basic", oauthtest.Client{"client_secret": "m2m-secret-value", "token_endpoint_auth_method": "client_secret_basic"}),
		m2m("m2m-es256", oauthtest.Client{"token_endpoint_auth_method": "private_key_jwt", "token_endpoint_auth_signing_alg": "ES256",
			"jwks": map[string]any{"keys": []map[string]any{{"kty": "EC", "crv": "P-256", "x": b64(pad32(ecKey.X)), "y": b64(pad32(ecKey.Y))}}}}),
		m2m("m2m-rs256", oauthtest.Client{"token_endpoint_auth_method": "private_key_jwt", "token_endpoint_auth_signing_alg": "RS256",
			"jwks": map[string]any{"keys": []map[string]any{{"kty": "RSA", "n": b64(rsaKey.N.Bytes()), "e": b64(big.NewInt(int64(rsaKey.E)).Bytes())}}}}),
	}
	e := newEnv(t, oauthtest.Config{Clients: clients, AccessTokenTTL: 60}, oauthtest.ServerOptions{Scopes: []string{"mcp:read"}})
	for _, tc := range []struct{ id, secret, key string }{
		{"m2m-basic", "m2m-secret-value", ""}, {"m2m-es256", "", ecFile}, {"m2m-rs256", "", rsaFile},
	} {
		t.Run(tc.id, func(t *testing.T) {
			cx := testCtx(t)
			clock := newFakeClock()
			store := &mcpauth.MemoryStore{}
			a, err := mcpauth.New(mcpauth.Options{ServerName: "m2m", ServerURL: e.srv.URL, Grant: mcpauth.GrantClientCredentials,
				ClientID: tc.id, ClientSecret: tc.secret, PrivateKeyFile: tc.key, Store: store, Now: clock.Now,
				OpenURL: func(context.Context, string) error { t.Error("a machine grant opened a browser"); return nil }})
			if err != nil {
				t.Fatal(err)
			}
			cs := connect(t, cx, a, e.srv.URL)
			if got := whoami(t, cx, cs); !strings.Contains(got, "user="+tc.id) {
				t.Fatalf("whoami = %q, want the client %s", got, tc.id)
			}
			first, _ := store.Load(cx, a.Key())
			// Expiry: a new client credentials token, no browser, no refresh token.
			clock.Advance(61e9)
			whoami(t, cx, cs)
			second, _ := store.Load(cx, a.Key())
			if second.Token.AccessToken == first.Token.AccessToken || second.Token.RefreshToken != "" {
				t.Fatal("the expired machine token was not replaced by a new grant")
			}
		})
	}
}

func pad32(n *big.Int) []byte {
	b := make([]byte, 32)
	return n.FillBytes(b)
}

// Behaviour 5: enterprise-managed authorization through extauth — the user's ID token from
// the identity provider (one oidc-provider) is exchanged there (RFC 8693) for an identity
// assertion grant, which the MCP server's authorization server (another oidc-provider)
// takes in the JWT bearer grant (RFC 7523) for an access token to the server.
func TestEnterpriseManagedAuthorization(t *testing.T) {
	srv := oauthtest.ReserveServer()
	idp := oauthtest.Start(t, oauthtest.Config{
		TokenExchange: &oauthtest.TokenExchange{ClientID: "mcp-enterprise"},
		Clients: []oauthtest.Client{{"client_id": "harness-at-idp", "client_secret": "idp-secret-value",
			"application_type": "native", "redirect_uris": []string{"http://127.0.0.1/callback"},
			"grant_types":                []string{"authorization_code", "urn:ietf:params:oauth:grant-type:token-exchange"},
			"token_endpoint_auth_method": "client_secret_post"}},
	})
	as := oauthtest.Start(t, oauthtest.Config{
		JWTBearerIssuer: idp.Issuer,
		Resources:       map[string]oauthtest.Resource{srv.URL: {Scope: "mcp:read"}},
		Clients: []oauthtest.Client{oauthtest.IntrospectorClient(), {"client_id": "mcp-enterprise", "client_secret": "mcp-secret-value",
			"redirect_uris": []string{}, "response_types": []string{},
			"grant_types": []string{"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "token_endpoint_auth_method": "client_secret_post"}},
	})
	oauthtest.NewServer(t, as, srv, oauthtest.ServerOptions{Scopes: []string{"mcp:read"}})
	cx := testCtx(t)

	// The user's single sign-on: an OIDC login at the identity provider (the SDK's
	// extauth.PerformOIDCLogin), the ID token kept in a file as an SSO agent would.
	codes := make(chan url.Values, 1)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		codes <- r.URL.Query()
		_, _ = w.Write([]byte("ok"))
	}))
	defer cb.Close()
	tok, err := extauth.PerformOIDCLogin(cx, &extauth.OIDCLoginConfig{
		IssuerURL:   idp.Issuer,
		Credentials: &oauthex.ClientCredentials{ClientID: "harness-at-idp", ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: "idp-secret-value"}},
		RedirectURL: cb.URL + "/callback",
		Scopes:      []string{"openid"},
	}, func(cx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		if err := oauthtest.Browse(cx, args.URL); err != nil {
			return nil, err
		}
		q := <-codes
		return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
	})
	if err != nil {
		t.Fatalf("OIDC login at the identity provider: %v", err)
	}
	idFile := filepath.Join(t.TempDir(), "id_token")
	if err := os.WriteFile(idFile, []byte(tok.Extra("id_token").(string)), 0o600); err != nil {
		t.Fatal(err)
	}

	store := &mcpauth.MemoryStore{}
	a, err := mcpauth.New(mcpauth.Options{ServerName: "ent", ServerURL: srv.URL, Grant: mcpauth.GrantEnterprise,
		ClientID: "mcp-enterprise", ClientSecret: "mcp-secret-value", Store: store,
		Enterprise: &mcpauth.EnterpriseOptions{IdPIssuer: idp.Issuer, IdPClientID: "harness-at-idp", IdPClientSecret: "idp-secret-value",
			IDToken: func(context.Context) (string, error) {
				b, err := os.ReadFile(idFile)
				return string(b), err
			}},
		OpenURL: func(context.Context, string) error { t.Error("the enterprise grant opened a browser"); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if got := whoami(t, cx, connect(t, cx, a, srv.URL)); !strings.Contains(got, "mcp:read") {
		t.Fatalf("whoami = %q", got)
	}
	var grants []string
	for _, tr := range idp.TokenRequests() {
		grants = append(grants, "idp:"+tr.Grant)
	}
	for _, tr := range as.TokenRequests() {
		grants = append(grants, "as:"+tr.Grant)
	}
	want := "idp:authorization_code idp:urn:ietf:params:oauth:grant-type:token-exchange as:urn:ietf:params:oauth:grant-type:jwt-bearer"
	if strings.Join(grants, " ") != want {
		t.Fatalf("token requests %v, want %s", grants, want)
	}

	// Issue 23 item 4: an identity provider used only for the exchange need not support
	// PKCE (its metadata here advertises none), and its token endpoint can be configured
	// instead of discovered.
	noPKCE := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var doc map[string]any
		if err := getJSONDoc(idp.Issuer+"/.well-known/openid-configuration", &doc); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		delete(doc, "code_challenge_methods_supported")
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(doc)
	}))
	defer noPKCE.Close()
	idTok := func(context.Context) (string, error) {
		b, err := os.ReadFile(idFile)
		return string(b), err
	}
	for _, v := range []struct {
		name string
		ent  mcpauth.EnterpriseOptions
		hc   *http.Client
	}{
		{"idp without PKCE", mcpauth.EnterpriseOptions{IdPIssuer: idp.Issuer},
			&http.Client{Transport: rewrite{from: idp.Issuer + "/.well-known/openid-configuration", to: noPKCE.URL}}},
		{"configured token endpoint", mcpauth.EnterpriseOptions{IdPTokenEndpoint: idp.Issuer + "/token"}, nil},
	} {
		v.ent.IdPClientID, v.ent.IdPClientSecret, v.ent.IDToken = "harness-at-idp", "idp-secret-value", idTok
		a, err := mcpauth.New(mcpauth.Options{ServerName: "ent", ServerURL: srv.URL, Grant: mcpauth.GrantEnterprise,
			ClientID: "mcp-enterprise", ClientSecret: "mcp-secret-value", Store: &mcpauth.MemoryStore{}, Enterprise: &v.ent, HTTPClient: v.hc})
		if err != nil {
			t.Fatal(err)
		}
		if got := whoami(t, cx, connect(t, cx, a, srv.URL)); !strings.Contains(got, "mcp:read") {
			t.Fatalf("%s: whoami = %q", v.name, got)
		}
	}
}

// getJSONDoc reads a JSON document.
func getJSONDoc(u string, v any) error {
	resp, err := http.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}
