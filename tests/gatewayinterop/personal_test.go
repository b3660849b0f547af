//go:build unix

package gatewayinterop

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/gateway/access"
	"github.com/cordisgo/harness/gateway/redisstore"
	"github.com/cordisgo/harness/hostgateway"
	"github.com/cordisgo/harness/internal/oauthtest"
	"github.com/cordisgo/harness/mcpauth"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/testkit/redistest"
)

// person is someone signed in to the team's gateway: their stored login, and a go-sdk
// session on the gateway with its token.
type person struct {
	login   string
	store   *mcpauth.MemoryStore
	cs      *mcp.ClientSession
	changed chan struct{} // a tools/list_changed came
}

// waitTool waits until pe's session lists name, woken by tools/list_changed.
func (pe *person) waitTool(t *testing.T, name string) {
	t.Helper()
	for {
		for tool, err := range pe.cs.Tools(t.Context(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			if tool.Name == name {
				return
			}
		}
		select {
		case <-pe.changed:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s's session never listed %s", pe.login, name)
		}
	}
}

// TestPersonalCredentials: a hosted server (oauthtest's, behind its own authorization) is a
// personal server of the team's gateway. Alice signs in to it through the gateway
// (hostgateway.LoginThrough, what `harness mcp login NAME --gateway URL` runs: the browser
// flow on her side, the credentials handed to the gateway); her calls of its whoami tool
// run with her login. Bob, signed in to the gateway but not to the server, is told to sign
// in; once he has, his calls run with his. The gateway keeps both logins in Redis,
// encrypted: no token is there in clear.
func TestPersonalCredentials(t *testing.T) {
	redisSrv := redistest.Start(t, redistest.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gwURL := "http://" + ln.Addr().String() + "/mcp"
	hosted := oauthtest.ReserveServer()
	p := oauthtest.Start(t, oauthtest.Config{
		Clients:   []oauthtest.Client{oauthtest.IntrospectorClient()},
		Resources: map[string]oauthtest.Resource{gwURL: {Scope: "mcp"}, hosted.URL: {Scope: "mcp:read"}},
	})
	oauthtest.NewServer(t, p, hosted, oauthtest.ServerOptions{Scopes: []string{"mcp:read"}})

	key := make([]byte, 32)
	_, _ = rand.Read(key)
	var cfg access.Config
	cfg.Default()
	cfg.Resource, cfg.Issuer, cfg.Scopes = gwURL, p.Issuer, []string{"mcp"}
	cfg.Introspection = &access.Introspection{ClientID: oauthtest.IntrospectorID, ClientSecret: oauthtest.IntrospectorSecret}
	cfg.Rules = []access.Rule{{Who: []string{"*"}, Allow: []string{"hosted"}}}
	cfg.Personal = &access.Personal{Key: base64.StdEncoding.EncodeToString(key), Servers: map[string]access.PersonalServer{"hosted": {URL: hosted.URL}}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	store, err := redisstore.Open(t.Context(), redisstore.Options{URL: redisSrv.URL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	root := ctx.New(ctx.Options{Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { _ = root.Scope().Dispose(context.Background()) })
	s, err := root.Plugin(toolregistry.Plugin, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	gw, err := gateway.New(root, gateway.Options{Store: store, Vault: store, Replica: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	h, err := gw.Handler(gateway.HTTPOptions{Addr: ln.Addr().String(), Access: access.New(cfg)})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = gw.Close(); _ = srv.Close() })

	browser := func(login string) func(context.Context, string) error {
		return func(cx context.Context, u string) error { return oauthtest.BrowseAs(cx, u, login) }
	}
	// signIn signs login in to the gateway only, and opens their session on it.
	signIn := func(login string) *person {
		pe := &person{login: login, store: &mcpauth.MemoryStore{}, changed: make(chan struct{}, 1)}
		a, err := mcpauth.New(mcpauth.Options{ServerName: "gateway", ServerURL: gwURL, Store: pe.store, Interactive: true, OpenURL: browser(login)})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Login(t.Context()); err != nil {
			t.Fatalf("%s signing in to the gateway: %v", login, err)
		}
		c := mcp.NewClient(&mcp.Implementation{Name: login, Version: "1"}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
				select {
				case pe.changed <- struct{}{}:
				default:
				}
			}})
		pe.cs, err = c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: gwURL, HTTPClient: &http.Client{Transport: a.Transport(nil)}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = pe.cs.Close() })
		return pe
	}
	loginThrough := func(pe *person) {
		if err := hostgateway.LoginThrough(t.Context(), gwURL, "hosted", hostgateway.LoginOptions{Store: pe.store, OpenURL: browser(pe.login)}); err != nil {
			t.Fatalf("%s signing in to hosted through the gateway: %v", pe.login, err)
		}
	}
	whoami := func(pe *person) (string, bool) {
		res, err := pe.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp__hosted__whoami", Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("%s whoami: %v", pe.login, err)
		}
		var text string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text += tc.Text
			}
		}
		return text, !res.IsError
	}

	alice := signIn("alice")
	loginThrough(alice)
	alice.waitTool(t, "mcp__hosted__whoami")
	if got, ok := whoami(alice); !ok || !strings.HasPrefix(got, "user=alice") {
		t.Fatalf("alice's whoami: %q ok=%v", got, ok)
	}
	bob := signIn("bob")
	if got, ok := whoami(bob); ok || !strings.Contains(got, "bob has not signed in to hosted") || !strings.Contains(got, "harness mcp login hosted --gateway "+gwURL) {
		t.Fatalf("bob's whoami before his login: %q ok=%v", got, ok)
	}
	loginThrough(bob)
	if got, ok := whoami(bob); !ok || !strings.HasPrefix(got, "user=bob") {
		t.Fatalf("bob's whoami: %q ok=%v", got, ok)
	}
	if got, _ := whoami(alice); !strings.HasPrefix(got, "user=alice") {
		t.Fatalf("alice's whoami after bob's login: %q", got)
	}

	// In Redis: one sealed value per person, no token in clear.
	ro, _ := redis.ParseURL(redisSrv.URL)
	rdb := redis.NewClient(ro)
	defer func() { _ = rdb.Close() }()
	keys, err := rdb.Keys(t.Context(), redisstore.DefaultPrefix+"vault:cred:*").Result()
	if err != nil || len(keys) != 2 {
		t.Fatalf("vault keys %v, %v", keys, err)
	}
	tokens := hosted.Tokens()
	if len(tokens) < 2 {
		t.Fatalf("the hosted server saw tokens %d", len(tokens))
	}
	for _, k := range keys {
		v, _ := rdb.Get(t.Context(), k).Result()
		for _, tok := range tokens {
			if strings.Contains(v, tok) {
				t.Fatalf("%s holds a token in clear", k)
			}
		}
	}
}
