//go:build unix

package gatewayinterop

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/gateway/access"
	"github.com/cordisgo/harness/gateway/redisstore"
	"github.com/cordisgo/harness/hostgateway"
	"github.com/cordisgo/harness/internal/oauthtest"
	"github.com/cordisgo/harness/mcpauth"
	"github.com/cordisgo/harness/testkit/gatewaytest"
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

// personalFleet is a team's gateway (in process, on Redis, signing people in with
// oidc-provider) whose personal server hosted is a server behind its own authorization
// (oauthtest's, with a whoami tool that names the caller's login).
type personalFleet struct {
	t      *testing.T
	url    string // the gateway's /mcp URL
	redis  *redistest.Server
	hosted *oauthtest.Server
}

func newPersonalFleet(t *testing.T) *personalFleet {
	t.Helper()
	f := &personalFleet{t: t, redis: redistest.Start(t, redistest.Options{})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.url = "http://" + ln.Addr().String() + "/mcp"
	f.hosted = oauthtest.ReserveServer()
	p := oauthtest.Start(t, oauthtest.Config{
		Clients:   []oauthtest.Client{oauthtest.IntrospectorClient()},
		Resources: map[string]oauthtest.Resource{f.url: {Scope: "mcp"}, f.hosted.URL: {Scope: "mcp:read"}},
	})
	oauthtest.NewServer(t, p, f.hosted, oauthtest.ServerOptions{Scopes: []string{"mcp:read"}})

	key := make([]byte, 32)
	_, _ = rand.Read(key)
	var cfg access.Config
	cfg.Default()
	cfg.Resource, cfg.Issuer, cfg.Scopes = f.url, p.Issuer, []string{"mcp"}
	cfg.Introspection = &access.Introspection{ClientID: oauthtest.IntrospectorID, ClientSecret: oauthtest.IntrospectorSecret}
	cfg.Rules = []access.Rule{{Who: []string{"*"}, Allow: []string{"hosted"}}}
	cfg.Personal = &access.Personal{Key: base64.StdEncoding.EncodeToString(key), Servers: map[string]access.PersonalServer{"hosted": {URL: f.hosted.URL}}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	store, err := redisstore.Open(t.Context(), redisstore.Options{URL: f.redis.URL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	gatewaytest.ServeOn(t, ln, gatewaytest.Tree(t, gatewaytest.TreeOptions{}), gateway.Options{Store: store, Vault: store, Replica: "r1"}, gateway.HTTPOptions{Addr: ln.Addr().String(), Access: access.New(cfg)})
	return f
}

// browser plays login in the browser: it follows an authorization URL as they would.
func browser(login string) func(context.Context, string) error {
	return func(cx context.Context, u string) error { return oauthtest.BrowseAs(cx, u, login) }
}

// signIn signs login in to the gateway only, and opens their session on it.
func (f *personalFleet) signIn(login string) *person {
	t := f.t
	t.Helper()
	pe := &person{login: login, store: &mcpauth.MemoryStore{}, changed: make(chan struct{}, 1)}
	a, err := mcpauth.New(mcpauth.Options{ServerName: "gateway", ServerURL: f.url, Store: pe.store, Interactive: true, OpenURL: browser(login)})
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
	pe.cs, err = c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: f.url, HTTPClient: &http.Client{Transport: a.Transport(nil)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pe.cs.Close() })
	return pe
}

// whoami calls hosted's whoami in pe's session: its text, and whether it succeeded.
func (f *personalFleet) whoami(pe *person) (string, bool) {
	t := f.t
	t.Helper()
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

// vaultHoldsNoToken checks that Redis holds one sealed value per person who signed in to
// hosted, and none of hosted's tokens in clear.
func (f *personalFleet) vaultHoldsNoToken(people int) {
	t := f.t
	t.Helper()
	ro, _ := redis.ParseURL(f.redis.URL)
	rdb := redis.NewClient(ro)
	defer func() { _ = rdb.Close() }()
	keys, err := rdb.Keys(t.Context(), redisstore.DefaultPrefix+"vault:cred:*").Result()
	if err != nil || len(keys) != people {
		t.Fatalf("vault keys %v, %v; want %d", keys, err, people)
	}
	tokens := f.hosted.Tokens()
	if len(tokens) < people {
		t.Fatalf("the hosted server saw %d tokens", len(tokens))
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

// TestPersonalCredentials: a hosted server (oauthtest's, behind its own authorization) is a
// personal server of the team's gateway. Alice signs in to it through the gateway
// (hostgateway.LoginThrough, what `harness mcp login NAME --gateway URL` runs: the browser
// flow on her side, the credentials handed to the gateway); her calls of its whoami tool
// run with her login. Bob, signed in to the gateway but not to the server, is told to sign
// in; once he has, his calls run with his. The gateway keeps both logins in Redis,
// encrypted: no token is there in clear.
func TestPersonalCredentials(t *testing.T) {
	f := newPersonalFleet(t)
	loginThrough := func(pe *person) {
		if err := hostgateway.LoginThrough(t.Context(), f.url, "hosted", hostgateway.LoginOptions{Store: pe.store, OpenURL: browser(pe.login)}); err != nil {
			t.Fatalf("%s signing in to hosted through the gateway: %v", pe.login, err)
		}
	}

	alice := f.signIn("alice")
	loginThrough(alice)
	alice.waitTool(t, "mcp__hosted__whoami")
	if got, ok := f.whoami(alice); !ok || !strings.HasPrefix(got, "user=alice") {
		t.Fatalf("alice's whoami: %q ok=%v", got, ok)
	}
	bob := f.signIn("bob")
	if got, ok := f.whoami(bob); ok || !strings.Contains(got, "bob has not signed in to hosted") || !strings.Contains(got, "harness mcp login hosted --gateway "+f.url) {
		t.Fatalf("bob's whoami before his login: %q ok=%v", got, ok)
	}
	loginThrough(bob)
	if got, ok := f.whoami(bob); !ok || !strings.HasPrefix(got, "user=bob") {
		t.Fatalf("bob's whoami: %q ok=%v", got, ok)
	}
	if got, _ := f.whoami(alice); !strings.HasPrefix(got, "user=alice") {
		t.Fatalf("alice's whoami after bob's login: %q", got)
	}
	f.vaultHoldsNoToken(2)
}
