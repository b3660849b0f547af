//go:build unix

package gatewayinterop

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/gateway/access"
	"github.com/cordisgo/harness/gateway/audit"
	"github.com/cordisgo/harness/internal/oauthtest"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/testkit/gatewaytest"
)

// teamGateway serves the demo server through a gateway whose people sign in with
// oidc-provider (tokens by introspection, audience checked), under rules: everyone may use
// the demo server, the group interns (bob) may not call add. It returns the gateway's URL,
// the gateway and the audit file.
func teamGateway(t *testing.T, format string) (string, *gateway.Gateway, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/mcp"
	p := oauthtest.Start(t, oauthtest.Config{
		Clients:   []oauthtest.Client{oauthtest.IntrospectorClient()},
		Resources: map[string]oauthtest.Resource{url: {Scope: "mcp", Format: format}},
		Groups:    map[string][]string{"bob": {"interns"}},
	})
	var cfg access.Config
	cfg.Default()
	cfg.Resource, cfg.Issuer, cfg.Scopes = url, p.Issuer, []string{"mcp"}
	if format != "jwt" {
		cfg.Introspection = &access.Introspection{ClientID: oauthtest.IntrospectorID, ClientSecret: oauthtest.IntrospectorSecret}
	}
	cfg.Rules = []access.Rule{{Who: []string{"*"}, Allow: []string{"demo"}}, {Who: []string{"group:interns"}, Deny: []string{"demo/add"}}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}

	root := gatewaytest.Tree(t, gatewaytest.TreeOptions{})
	mountDemo(t, root)

	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	trail, err := audit.OpenFile(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = trail.Close() })
	gw := gatewaytest.ServeOn(t, ln, root, gateway.Options{Audit: trail}, gateway.HTTPOptions{Addr: ln.Addr().String(), Access: access.New(cfg)})
	return url, gw, auditPath
}

// signIn runs signin.mjs as login (the test plays the browser) and returns its results.
func signIn(t *testing.T, url, login string, ops ...any) []json.RawMessage {
	t.Helper()
	b, _ := json.Marshal(ops)
	cx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	var results []json.RawMessage
	authorized := false
	stderr, err := runNode(cx, t, "signin.mjs", []string{url, string(b)}, func(line string) {
		if u, ok := strings.CutPrefix(line, "AUTHORIZE "); ok {
			authorized = true
			if err := oauthtest.BrowseAs(cx, u, login); err != nil {
				t.Errorf("signing in as %s: %v", login, err)
			}
			return
		}
		var r struct{ Results []json.RawMessage }
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("signin.mjs: %q: %v", line, err)
		}
		results = r.Results
	})
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("signin.mjs as %s: %v\n%s", login, err, stderr)
		}
		t.Fatal(err)
	}
	if !authorized {
		t.Fatalf("signin.mjs as %s was never asked to sign in", login)
	}
	return results
}

// TestTeamSignIn: the TypeScript SDK client signs in through the gateway with the test
// identity provider (discovery from the gateway's 401 and protected-resource metadata,
// dynamic registration, authorization code with PKCE, the gateway checking each token's
// audience by introspection); alice may call add, bob (in the group interns) does not see
// it and is refused it clearly; the audit trail lists both calls, with who and the outcome.
func TestTeamSignIn(t *testing.T) {
	suite.File(t, "@modelcontextprotocol/sdk/package.json")
	url, gw, auditPath := teamGateway(t, "")

	// Without a token: 401, with the metadata's URL in the challenge; the metadata names
	// the provider.
	res, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(res.Header.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Fatalf("no token: %s, WWW-Authenticate %q", res.Status, res.Header.Get("WWW-Authenticate"))
	}

	call := op("tools/call", map[string]any{"name": "mcp__demo__add", "arguments": map[string]any{"a": 2, "b": 3}})
	alice := signIn(t, url, "alice", op("tools/list", map[string]any{}), call)
	contains(t, "alice's tools", alice[0], `"mcp__demo__add"`, `"mcp__demo__echo"`)
	contains(t, "alice's add", alice[1], `5`)
	if strings.Contains(string(alice[1]), `"isError":true`) {
		t.Errorf("alice's add failed: %s", alice[1])
	}

	bob := signIn(t, url, "bob", op("tools/list", map[string]any{}), call)
	contains(t, "bob's tools", bob[0], `"mcp__demo__echo"`)
	if strings.Contains(string(bob[0]), `"mcp__demo__add"`) {
		t.Errorf("bob is shown add: %.400s", bob[0])
	}
	contains(t, "bob's add", bob[1], `"isError":true`, "bob may not call demo/add", "access rules deny demo/add")

	_ = gw.Close() // appends what the audit writer holds
	entries, err := audit.ReadFile(auditPath, audit.Query{Tool: "add"})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Fatalf("audit of add: %+v", entries)
	}
	a, b := entries[0], entries[1]
	if a.Person != "alice" || a.Outcome != audit.OK || a.Server != "demo" || a.Route != gateway.PathAggregated || string(a.Args) != `{"a":2,"b":3}` {
		t.Errorf("alice's entry: %+v", a)
	}
	if b.Person != "bob" || b.Outcome != string(toolregistry.CodeDenied) || !strings.Contains(b.Error, "deny demo/add") || len(b.Groups) != 1 || b.Groups[0] != "interns" {
		t.Errorf("bob's entry: %+v", b)
	}
}

// TestTeamJWT: with JWT access tokens (verified with the provider's JWKS, audience and
// issuer checked), the TypeScript SDK client signs in and is served; tokens the provider
// did not sign (a random string, an unsigned JWT) are refused (401) to a go-sdk client.
func TestTeamJWT(t *testing.T) {
	url, _, _ := teamGateway(t, "jwt")
	results := signIn(t, url, "alice", op("tools/call", map[string]any{"name": "mcp__demo__echo", "arguments": map[string]any{"text": "jwt"}}))
	contains(t, "echo with a JWT", results[0], `jwt`)
	for _, tok := range []string{"not-a-token", "eyJhbGciOiJub25lIn0.eyJzdWIiOiJldmUifQ."} {
		c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
		_, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerRT(tok)}}, nil)
		if err == nil || !strings.Contains(err.Error(), "Unauthorized") {
			t.Errorf("token %q: %v", tok, err)
		}
	}
}

type bearerRT string

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}
