// Package oauthtest runs real authorization components for the tests of the MCP
// authorization code: oidc-provider (a certified OpenID Connect server from npm, pinned in
// oidc/package.json and installed with `npm ci --prefix internal/oauthtest/oidc`), a
// go-sdk MCP server behind auth.RequireBearerToken that verifies tokens by introspection
// at that provider, and a test browser that follows the authorization redirects and
// submits oidc-provider's development login and consent forms.
//
// Nothing here is a fake: the authorization server, the token formats and the MCP server
// are the real ones; only the user is automated.
package oauthtest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cordisgo/harness/internal/npmci"
	"github.com/cordisgo/harness/internal/syncio"
)

// oidcPackages is the npm package of oidc-provider, pinned in oidc/ next to this file.
var oidcPackages = npmci.Suite{Name: "authorization", Dir: dir(), Prefix: "internal/oauthtest/oidc"}

// Client is a static client of the provider, in oidc-provider's metadata format
// (snake_case keys as in RFC 7591).
type Client map[string]any

// Resource is a protected resource (an MCP server URL) the provider issues tokens for.
type Resource struct {
	Scope string `json:"scope"`
	// Format is the access tokens' format for it: "opaque" (the default: verified by
	// introspection) or "jwt" (signed with the provider's keys, verified with its JWKS).
	Format string `json:"format,omitempty"`
}

// Config configures the provider.
type Config struct {
	Clients        []Client            `json:"clients,omitempty"`
	Resources      map[string]Resource `json:"resources,omitempty"`
	AccessTokenTTL int                 `json:"accessTokenTTL,omitempty"`
	// TokenExchange makes the provider an identity provider that exchanges its ID tokens
	// (RFC 8693) for identity assertion grants naming ClientID (the client at the MCP
	// server's authorization server).
	TokenExchange *TokenExchange `json:"tokenExchange,omitempty"`
	// JWTBearerIssuer makes the provider accept identity assertion grants from that
	// identity provider in the JWT bearer grant (RFC 7523).
	JWTBearerIssuer string `json:"jwtBearerIssuer,omitempty"`
	// AssignAuthMethod makes dynamic registration assign this token endpoint
	// authentication method, whatever the client asked for.
	AssignAuthMethod string `json:"assignAuthMethod,omitempty"`
	// Groups are the groups of each account (by login), put in the "groups" claim of their
	// access tokens (introspection and JWT alike).
	Groups map[string][]string `json:"groups,omitempty"`
}

// TokenExchange configures the identity provider role.
type TokenExchange struct {
	ClientID string `json:"clientId"`
}

// Provider is a running oidc-provider process. It is safe for concurrent use.
type Provider struct {
	// Issuer is the provider's issuer URL (http://127.0.0.1:PORT).
	Issuer string

	mu     sync.Mutex
	tokens []TokenRequest
	cmd    *exec.Cmd
	done   chan struct{}
}

// TokenRequest is one request the provider's token endpoint received.
type TokenRequest struct {
	Grant, RefreshToken, Resource string
}

// dir returns the absolute path of the oidc directory, next to this file.
func dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "oidc")
}

// Start runs oidc-provider with cfg and waits until it prints that it is ready. It is
// stopped when t ends.
func Start(t testing.TB, cfg Config) *Provider {
	t.Helper()
	node := oidcPackages.Node(t)
	oidcPackages.File(t, "oidc-provider/package.json")
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "server.mjs")
	cmd.Dir = oidcPackages.Dir
	cmd.Env = append(os.Environ(), "OIDC_CONFIG="+string(b), "NODE_ENV=test")
	var stderr strings.Builder
	cmd.Stderr = &syncio.Writer{W: &stderr}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start oidc-provider: %v", err)
	}
	p := &Provider{cmd: cmd, done: make(chan struct{})}
	ready := make(chan string, 1)
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			switch f := strings.Fields(line); {
			case len(f) == 2 && f[0] == "READY":
				ready <- f[1]
			case len(f) == 4 && f[0] == "TOKEN":
				tr := TokenRequest{Grant: f[1], RefreshToken: f[2], Resource: f[3]}
				if tr.RefreshToken == "-" {
					tr.RefreshToken = ""
				}
				if tr.Resource == "-" {
					tr.Resource = ""
				}
				p.mu.Lock()
				p.tokens = append(p.tokens, tr)
				p.mu.Unlock()
			}
		}
		_ = cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Process.Kill()
		<-p.done
	})
	select {
	case p.Issuer = <-ready:
	case <-p.done:
		t.Fatalf("oidc-provider exited before it was ready: %s", stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("oidc-provider did not print READY within a minute: %s", stderr.String())
	}
	return p
}

// TokenRequests returns the token requests received so far.
func (p *Provider) TokenRequests() []TokenRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]TokenRequest(nil), p.tokens...)
}

// Introspect asks the provider about token with the given client's credentials
// (RFC 7662) and returns the decoded answer.
func (p *Provider) Introspect(cx context.Context, clientID, secret, token string) (map[string]any, error) {
	var out map[string]any
	return out, p.post(cx, "/token/introspection", clientID, secret, token, &out)
}

// Revoke revokes token at the provider (RFC 7009) with the given client's credentials.
// oidc-provider revokes the whole grant with it, refresh tokens included.
func (p *Provider) Revoke(cx context.Context, clientID, secret, token string) error {
	return p.post(cx, "/token/revocation", clientID, secret, token, nil)
}

// post sends token to one of the provider's token management endpoints as the client
// (HTTP Basic with a secret; client_id in the body for a public client) and decodes the
// JSON answer into out unless it is nil.
func (p *Provider) post(cx context.Context, path, clientID, secret, token string, out any) error {
	form := url.Values{"token": {token}}
	if secret == "" {
		form.Set("client_id", clientID)
	}
	req, err := http.NewRequestWithContext(cx, http.MethodPost, p.Issuer+path, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if secret != "" {
		req.SetBasicAuth(clientID, secret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("%s: %s: %s", path, resp.Status, b)
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// BrowserEnv is set (to "1") in the environment of a test binary re-executed as $BROWSER.
const BrowserEnv = "OAUTHTEST_BROWSER"

// BrowserMain is the test browser's main: it browses the URL in args[0] and returns the
// exit code. Call it from TestMain when BrowserEnv is set.
func BrowserMain(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "oauthtest browser: want one URL argument")
		return 2
	}
	cx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := Browse(cx, args[0]); err != nil {
		fmt.Fprintln(os.Stderr, "oauthtest browser:", err)
		return 1
	}
	return 0
}

var (
	formRe  = regexp.MustCompile(`(?s)<form[^>]*action="([^"]*)"[^>]*method="post"[^>]*>(.*?)</form>`)
	inputRe = regexp.MustCompile(`<input[^>]*>`)
	nameRe  = regexp.MustCompile(`name="([^"]*)"`)
	valueRe = regexp.MustCompile(`value="([^"]*)"`)
)

// Browse plays the user "alice": see [BrowseAs].
func Browse(cx context.Context, authURL string) error { return BrowseAs(cx, authURL, "alice") }

// BrowseAs plays the user login: it opens authURL with a cookie jar, follows redirects, and
// submits every form the provider shows (the login form with login, then the consent form)
// until a page without a form is reached, which is the redirect target's (the client's
// loopback listener) answer. It fails when that answer is not 200.
func BrowseAs(cx context.Context, authURL, login string) error {
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	req, err := http.NewRequestWithContext(cx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	for step := 0; step < 10; step++ {
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		m := formRe.FindSubmatch(body)
		if m == nil {
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("%s answered %s: %s", resp.Request.URL.Redacted(), resp.Status, clip(string(body)))
			}
			return nil
		}
		action, err := resp.Request.URL.Parse(htmlUnescape(string(m[1])))
		if err != nil {
			return err
		}
		form := url.Values{}
		for _, in := range inputRe.FindAll(m[2], -1) {
			n := nameRe.FindSubmatch(in)
			if n == nil {
				continue
			}
			v := ""
			if vm := valueRe.FindSubmatch(in); vm != nil {
				v = htmlUnescape(string(vm[1]))
			}
			switch string(n[1]) {
			case "login":
				v = login
			case "password":
				v = "secret"
			}
			form.Set(string(n[1]), v)
		}
		req, err = http.NewRequestWithContext(cx, http.MethodPost, action.String(), strings.NewReader(form.Encode()))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	return errors.New("too many forms: the flow did not reach the redirect")
}

func htmlUnescape(s string) string {
	return strings.NewReplacer("&amp;", "&", "&#x2F;", "/", "&#47;", "/", "&quot;", `"`, "&#39;", "'", "&lt;", "<", "&gt;", ">").Replace(s)
}

func clip(s string) string {
	if len(s) > 400 {
		return s[:400] + "…"
	}
	return s
}
