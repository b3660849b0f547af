package mcpauth_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/internal/oauthtest"
	"github.com/cordisgo/harness/mcpauth"
)

// env is one provider and one protected MCP server.
type env struct {
	p   *oauthtest.Provider
	srv *oauthtest.Server
}

const resourceScopes = "mcp:read mcp:write"

func newEnv(t *testing.T, cfg oauthtest.Config, sopts oauthtest.ServerOptions) *env {
	t.Helper()
	srv := oauthtest.ReserveServer()
	if cfg.Resources == nil {
		cfg.Resources = map[string]oauthtest.Resource{srv.URL: {Scope: resourceScopes}}
	}
	cfg.Clients = append(cfg.Clients, oauthtest.IntrospectorClient())
	p := oauthtest.Start(t, cfg)
	oauthtest.NewServer(t, p, srv, sopts)
	return &env{p: p, srv: srv}
}

// useTestBrowser makes $BROWSER the test binary, which plays the user.
func useTestBrowser(t *testing.T) {
	t.Setenv("BROWSER", os.Args[0])
	t.Setenv(oauthtest.BrowserEnv, "1")
}

// countingOpener opens the test browser in-process and counts logins.
type countingOpener struct{ n int }

func (c *countingOpener) open(cx context.Context, u string) error {
	c.n++
	return oauthtest.Browse(cx, u)
}

// login signs in to e's server through a browser opened by opener (a fresh one when nil),
// keeping the credentials in store, and returns the authorizer that did.
func (e *env) login(t *testing.T, cx context.Context, store mcpauth.Store, opener *countingOpener) *mcpauth.Authorizer {
	t.Helper()
	if opener == nil {
		opener = &countingOpener{}
	}
	a, _ := mcpauth.New(mcpauth.Options{ServerName: "demo", ServerURL: e.srv.URL, Store: store, OpenURL: opener.open})
	if err := a.Login(cx); err != nil {
		t.Fatalf("login: %v", err)
	}
	return a
}

func fileStore(t *testing.T) *mcpauth.FileStore {
	return mcpauth.NewFileStore(filepath.Join(t.TempDir(), "state", "harness", "credentials.json"))
}

// connect opens an MCP session through a's transport and returns it.
func connect(t *testing.T, cx context.Context, a *mcpauth.Authorizer, url string) *mcp.ClientSession {
	t.Helper()
	base := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(base.CloseIdleConnections)
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := client.Connect(cx, &mcp.StreamableClientTransport{
		Endpoint: url, HTTPClient: &http.Client{Transport: a.Transport(base)}, DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func whoami(t *testing.T, cx context.Context, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.CallTool(cx, &mcp.CallToolParams{Name: "whoami"})
	if err != nil {
		t.Fatalf("whoami: %v", err)
	}
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("whoami: %+v", res)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

func testCtx(t *testing.T) context.Context {
	cx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return cx
}

// fakeClock is an injected clock (Options.Now) the test advances: token expiry without
// waiting. The authorization server runs in another process, so testing/synctest's bubble
// cannot move its time; the client's clock moves instead.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

// newFakeClock returns a clock that starts at the real time (which the server's tokens are
// stamped with).
func newFakeClock() *fakeClock { return &fakeClock{now: time.Now()} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func mustGet(t *testing.T, cx context.Context, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(cx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	return req
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

func queryParam(t *testing.T, raw, name string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get(name)
}
