package mcpauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/cordisgo/harness/internal/oauthtest"
	"github.com/cordisgo/harness/mcpauth"
)

// Behaviour 1: the challenge's resource_metadata wins; without it the path-based
// well-known URL is used; the authorization server metadata comes from the provider.
func TestDiscoverFromChallengeAndWellKnown(t *testing.T) {
	e := newEnv(t, oauthtest.Config{}, oauthtest.ServerOptions{Scopes: []string{"mcp:read"}, ScopesSupported: []string{"mcp:read"}})
	cx := testCtx(t)
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	challenge := []oauthex.Challenge{{Scheme: "bearer", Params: map[string]string{"resource_metadata": e.srv.MetadataURL}}}
	md, err := mcpauth.Discover(cx, hc, e.srv.URL, challenge)
	if err != nil {
		t.Fatal(err)
	}
	if md.PRMURL != e.srv.MetadataURL || md.AS.Issuer != e.p.Issuer || md.Resource != e.srv.URL || md.Defaulted {
		t.Fatalf("discovered %+v", md)
	}
	md, err = mcpauth.Discover(cx, hc, e.srv.URL, nil)
	if err != nil || md.PRMURL != e.srv.MetadataURL || md.AS.RegistrationEndpoint == "" {
		t.Fatalf("path-based discovery: %+v %v", md, err)
	}
}

// Behaviour 1, 2025-03-26 servers: no protected-resource metadata means the server's origin
// is the authorization server; with no metadata there either, the default endpoints.
func TestDiscoverLegacyDefaults(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		http.NotFound(w, r)
	}))
	defer srv.Close()
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	md, err := mcpauth.Discover(context.Background(), hc, srv.URL+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !md.Defaulted || md.PRM != nil || md.AS.AuthorizationEndpoint != srv.URL+"/authorize" ||
		md.AS.TokenEndpoint != srv.URL+"/token" || md.AS.RegistrationEndpoint != srv.URL+"/register" || md.Resource != srv.URL+"/mcp" {
		t.Fatalf("legacy discovery: %+v %+v", md, md.AS)
	}
	want := []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource",
		"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Fatalf("requests %v, want %v", paths, want)
	}
}

// Behaviour 2: with a metadata document URL configured and supported by the server, its URL
// is the client ID (no registration); without support, dynamic registration is used.
// Behaviour 3: a redirect whose state does not match is refused.
func TestClientMetadataDocumentAndState(t *testing.T) {
	e := newEnv(t, oauthtest.Config{}, oauthtest.ServerOptions{Scopes: []string{"mcp:read"}})
	cx := testCtx(t)
	// A proxy of the provider's metadata that advertises metadata-document support.
	meta := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, err := http.Get(e.p.Issuer + "/.well-known/openid-configuration")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		var doc map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&doc)
		doc["client_id_metadata_document_supported"] = true
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(doc)
	}))
	defer meta.Close()
	var authURL string
	a, _ := mcpauth.New(mcpauth.Options{ServerName: "demo", ServerURL: e.srv.URL,
		ClientMetadataURL: "https://client.example.com/harness.json",
		HTTPClient:        &http.Client{Transport: rewrite{from: e.p.Issuer + "/.well-known/oauth-authorization-server", to: meta.URL}},
		OpenURL: func(_ context.Context, u string) error {
			authURL = u
			return errors.New("stop here")
		}})
	err := a.Login(cx)
	if err == nil || !strings.Contains(err.Error(), "stop here") {
		t.Fatalf("login: %v", err)
	}
	if got := queryParam(t, authURL, "client_id"); got != "https://client.example.com/harness.json" {
		t.Fatalf("client_id = %q, want the metadata document URL", got)
	}

	// State: a forged redirect is refused; the real one is never used.
	a2, _ := mcpauth.New(mcpauth.Options{ServerName: "demo", ServerURL: e.srv.URL,
		OpenURL: func(cx context.Context, u string) error {
			redirect := queryParam(t, u, "redirect_uri")
			resp, err := http.Get(redirect + "?code=forged&state=not-the-state")
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("forged redirect answered %s", resp.Status)
			}
			return nil
		}})
	err = a2.Login(cx)
	if !errors.Is(err, mcpauth.ErrAuthorization) || !strings.Contains(err.Error(), "state does not match") {
		t.Fatalf("forged state: %v", err)
	}
}

// rewrite sends requests for one URL to another server (the metadata proxy above).
type rewrite struct{ from, to string }

func (r rewrite) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.String() == r.from {
		out := req.Clone(req.Context())
		u, _ := req.URL.Parse(r.to)
		out.URL, out.Host = u, u.Host
		return http.DefaultTransport.RoundTrip(out)
	}
	return http.DefaultTransport.RoundTrip(req)
}
