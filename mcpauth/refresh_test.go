package mcpauth_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cordisgo/harness/internal/oauthtest"
	"github.com/cordisgo/harness/mcpauth"
)

// Behaviour 6: a ten-minute session against 60-second access tokens (an injected clock
// moves the client's time; the provider rotates refresh tokens and revokes the whole grant
// if one is ever presented twice) needs one login, refreshes before every expiry, and
// never sends a refresh token twice. A restart then reuses the stored refresh token.
func TestTenMinuteSessionRefreshes(t *testing.T) {
	e := newEnv(t, oauthtest.Config{AccessTokenTTL: 60}, oauthtest.ServerOptions{Scopes: []string{"mcp:read"}})
	cx := testCtx(t)
	store := fileStore(t)
	clock := newFakeClock()
	opener := &countingOpener{}
	a, err := mcpauth.New(mcpauth.Options{ServerName: "demo", ServerURL: e.srv.URL, Store: store,
		Interactive: true, OpenURL: opener.open, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, cx, a, e.srv.URL)
	whoami(t, cx, cs)
	for minute := 1; minute <= 10; minute++ {
		clock.Advance(61 * time.Second)
		whoami(t, cx, cs)
	}
	if opener.n != 1 {
		t.Fatalf("%d logins, want 1", opener.n)
	}
	var refreshes []string
	for _, tr := range e.p.TokenRequests() {
		if tr.Grant == "refresh_token" {
			refreshes = append(refreshes, tr.RefreshToken)
		}
	}
	if len(refreshes) != 10 {
		t.Fatalf("%d refreshes, want one per expiry (10)", len(refreshes))
	}
	seen := map[string]bool{}
	for _, rt := range refreshes {
		if seen[rt] {
			t.Fatal("a rotated refresh token was sent twice")
		}
		seen[rt] = true
	}
	if n := len(e.srv.Tokens()); n != 11 {
		t.Fatalf("server saw %d distinct access tokens, want 11", n)
	}

	// Restart: a new Authorizer on the same file refreshes with the stored (latest)
	// refresh token, no browser.
	clock.Advance(61 * time.Second)
	a2, _ := mcpauth.New(mcpauth.Options{ServerName: "demo", ServerURL: e.srv.URL, Store: store, Now: clock.Now})
	cs2 := connect(t, cx, a2, e.srv.URL)
	whoami(t, cx, cs2)
	if opener.n != 1 {
		t.Fatalf("the restart opened a browser")
	}
	last := e.p.TokenRequests()
	if tr := last[len(last)-1]; tr.Grant != "refresh_token" || seen[tr.RefreshToken] {
		t.Fatalf("restart: last token request %s reused=%t, want a fresh refresh", tr.Grant, seen[tr.RefreshToken])
	}
}

// Behaviour 6: a token the server stops accepting is refreshed
// on the 401 and the request retried, without a login.
func TestRefreshOnUnauthorized(t *testing.T) {
	e := newEnv(t, oauthtest.Config{}, oauthtest.ServerOptions{Scopes: []string{"mcp:read"}})
	cx := testCtx(t)
	store := &mcpauth.MemoryStore{}
	opener := &countingOpener{}
	a, _ := mcpauth.New(mcpauth.Options{ServerName: "demo", ServerURL: e.srv.URL, Store: store, Interactive: true, OpenURL: opener.open, Logger: testLogger(t)})
	cs := connect(t, cx, a, e.srv.URL)
	whoami(t, cx, cs)
	rec, _ := store.Load(cx, a.Key())
	e.srv.Refuse(rec.Token.AccessToken)
	whoami(t, cx, cs)
	if opener.n != 1 {
		t.Fatalf("%d logins, want 1", opener.n)
	}
	rec2, _ := store.Load(cx, a.Key())
	if rec2.Token.AccessToken == rec.Token.AccessToken || rec2.Token.RefreshToken == rec.Token.RefreshToken {
		t.Fatal("the 401 did not refresh (and rotate) the token")
	}
}

// A client without a login that may not open a browser reports ErrNeedsAuth with the
// login hint; so does one whose refresh token was revoked.
func TestNeedsAuth(t *testing.T) {
	e := newEnv(t, oauthtest.Config{}, oauthtest.ServerOptions{Scopes: []string{"mcp:read"}})
	cx := testCtx(t)
	a, _ := mcpauth.New(mcpauth.Options{ServerName: "demo", ServerURL: e.srv.URL})
	_, err := a.Transport(nil).RoundTrip(mustGet(t, cx, e.srv.URL))
	var na *mcpauth.NeedsAuthError
	if !errors.As(err, &na) || !errors.Is(err, mcpauth.ErrNeedsAuth) || !strings.Contains(err.Error(), "harness mcp login demo") {
		t.Fatalf("err = %v, want NeedsAuthError with the login hint", err)
	}

	store := &mcpauth.MemoryStore{}
	opener := &countingOpener{}
	login := e.login(t, cx, store, opener)
	rec, _ := store.Load(cx, login.Key())
	if err := e.p.Revoke(cx, rec.Client.ID, rec.Client.Secret, rec.Token.RefreshToken); err != nil {
		t.Fatal(err)
	}
	if err := e.p.Revoke(cx, rec.Client.ID, rec.Client.Secret, rec.Token.AccessToken); err != nil {
		t.Fatal(err)
	}
	live, _ := mcpauth.New(mcpauth.Options{ServerName: "demo", ServerURL: e.srv.URL, Store: store})
	_, err = live.Transport(nil).RoundTrip(mustGet(t, cx, e.srv.URL))
	if !errors.As(err, &na) || !strings.Contains(na.Reason, "expired or was revoked") {
		t.Fatalf("after revocation: err = %v, want NeedsAuthError (revoked)", err)
	}
	if live.LoggedIn(cx) {
		t.Fatal("a revoked grant still counts as logged in")
	}
}

// Behaviour 6: two clients sharing one credentials file (a host and a CLI command, each
// with its own FileStore) refreshing at once send the rotated refresh token once: the
// second adopts the first's new token under the file lock.
func TestConcurrentRefreshSendsRefreshTokenOnce(t *testing.T) {
	e := newEnv(t, oauthtest.Config{AccessTokenTTL: 60}, oauthtest.ServerOptions{Scopes: []string{"mcp:read"}})
	cx := testCtx(t)
	path := fileStore(t).Path()
	clock := newFakeClock()
	opener := &countingOpener{}
	a1, _ := mcpauth.New(mcpauth.Options{ServerName: "demo", ServerURL: e.srv.URL, Store: mcpauth.NewFileStore(path), OpenURL: opener.open, Now: clock.Now})
	if err := a1.Login(cx); err != nil {
		t.Fatal(err)
	}
	var told sync.Map // what a2 reported as sensitive (Options.Sensitive: the host's scrubber)
	a2, _ := mcpauth.New(mcpauth.Options{ServerName: "demo", ServerURL: e.srv.URL, Store: mcpauth.NewFileStore(path), Now: clock.Now,
		Sensitive: func(v string) { told.Store(v, true) }})
	for round := 0; round < 3; round++ {
		clock.Advance(61 * time.Second)
		var wg sync.WaitGroup
		toks := make([]string, 2)
		errs := make([]error, 2)
		for i, a := range []*mcpauth.Authorizer{a1, a2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				toks[i], errs[i] = a.AccessToken(cx)
			}()
		}
		wg.Wait()
		if errs[0] != nil || errs[1] != nil || toks[0] == "" || toks[0] != toks[1] {
			t.Fatalf("round %d: tokens equal=%t errs %v %v", round, toks[0] == toks[1], errs[0], errs[1])
		}
		if _, ok := told.Load(toks[1]); !ok {
			t.Fatalf("round %d: the access token a2 handed out was not reported sensitive", round)
		}
	}
	rec, _ := mcpauth.NewFileStore(path).Load(cx, a2.Key())
	if _, ok := told.Load(rec.Token.RefreshToken); !ok {
		t.Error("the refresh token a2 holds was not reported sensitive")
	}
	seen := map[string]bool{}
	n := 0
	for _, tr := range e.p.TokenRequests() {
		if tr.Grant == "refresh_token" {
			n++
			if seen[tr.RefreshToken] {
				t.Fatal("a refresh token was sent twice")
			}
			seen[tr.RefreshToken] = true
		}
	}
	if n != 3 {
		t.Fatalf("%d refreshes for 3 expiries, want 3", n)
	}
	// The grant survived (reuse would have revoked it): the latest token works.
	whoami(t, cx, connect(t, cx, a2, e.srv.URL))
}

// Logout revokes the grant at the provider (RFC 7009), then forgets it locally.
func TestLogoutRevokes(t *testing.T) {
	e := newEnv(t, oauthtest.Config{}, oauthtest.ServerOptions{Scopes: []string{"mcp:read"}})
	cx := testCtx(t)
	store := &mcpauth.MemoryStore{}
	a := e.login(t, cx, store, nil)
	rec, _ := store.Load(cx, a.Key())
	if rec.RevocationEndpoint == "" {
		t.Fatal("no revocation endpoint stored")
	}
	active := func(tok string) any {
		info, err := e.p.Introspect(cx, oauthtest.IntrospectorID, oauthtest.IntrospectorSecret, tok)
		if err != nil {
			t.Fatal(err)
		}
		return info["active"]
	}
	if active(rec.Token.AccessToken) != true {
		t.Fatal("the access token is not active before logout")
	}
	if err := a.Logout(cx); err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{rec.Token.AccessToken, rec.Token.RefreshToken} {
		info, err := e.p.Introspect(cx, oauthtest.IntrospectorID, oauthtest.IntrospectorSecret, tok)
		if err != nil || info["active"] != false {
			t.Fatalf("after logout the token is %v (%v), want inactive", info, err)
		}
	}
	if got, _ := store.Load(cx, a.Key()); got != nil || a.LoggedIn(cx) {
		t.Fatal("logout left the record")
	}
}
