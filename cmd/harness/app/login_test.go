package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cordisgo/harness/internal/oauthtest"
	"github.com/cordisgo/harness/internal/redact"
)

// mcp login / logout in process against a real authorization server (oidc-provider) and a
// go-sdk server behind auth.RequireBearerToken: the test binary is $BROWSER and plays the
// user; the token lands in $XDG_STATE_HOME/harness/credentials.json (0600); mcp list and
// probe then use it without a browser; logout makes the server needs-auth again. No
// token is ever printed. (Not parallel: it sets the process environment.)
func TestMCPLoginLogout(t *testing.T) {
	srv := oauthtest.ReserveServer()
	p := oauthtest.Start(t, oauthtest.Config{
		Clients:   []oauthtest.Client{oauthtest.IntrospectorClient()},
		Resources: map[string]oauthtest.Resource{srv.URL: {Scope: "mcp:read"}},
	})
	oauthtest.NewServer(t, p, srv, oauthtest.ServerOptions{Scopes: []string{"mcp:read"}})
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("BROWSER", os.Args[0])
	t.Setenv(oauthtest.BrowserEnv, "1")
	profile := writeFile(t, t.TempDir(), "p.yaml", "extends: cli\nplugins:\n  hosted:\n    use: mcpclient\n    config: {serverName: hosted, transport: streamable-http, url: \""+srv.URL+"\"}\n  local:\n    use: mcpclient\n    config: {serverName: local, transport: stdio, command: /bin/true}\n")
	mcp := func(args ...string) result {
		return run(t, nil, append(append([]string{"-p", profile, "mcp"}, args...), noHost(t)...)...)
	}

	r := mcp("list")
	r.expect(t, ExitOK, "needs-auth", "")
	if !strings.Contains(r.stdout, "harness mcp login hosted") {
		t.Fatalf("mcp list does not give the login hint:\n%s", r.stdout)
	}
	// An ad-hoc --http server's hint keeps the flags that define it (a secret header's
	// value masked).
	r = run(t, nil, "-p", profile, "--http", "adhoc="+srv.URL, "--set", "plugins.adhoc.config.startupTimeoutMs=20000",
		"--set", "plugins.adhoc.config.headers.X-Api-Key=abcdef0123456789", "mcp", "list")
	hint := "harness --http adhoc=" + srv.URL + " --set plugins.adhoc.config.startupTimeoutMs=20000 --set 'plugins.adhoc.config.headers.X-Api-Key=" + redact.Marker + "' mcp login adhoc"
	r.expect(t, ExitOK, hint, "")
	if strings.Contains(r.stdout+r.stderr, "abcdef0123456789") {
		t.Errorf("the header's value is shown:\n%s%s", r.stdout, r.stderr)
	}
	mcp("probe", "hosted").expect(t, ExitFailure, "failed at authorize", "")
	// A restart of a server that waits for a login answers at once, with the hint
	// (not after --timeout).
	mcp("restart", "hosted", "--timeout", "5m").expect(t, ExitFailure, "", "harness mcp login hosted")

	r = mcp("login", "hosted")
	r.expect(t, ExitOK, "hosted: logged in (scope mcp:read)", "Opening the browser to log in to hosted")
	file := filepath.Join(state, "harness", "credentials.json")
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file %s: %v %v", file, fi, err)
	}
	stored, _ := os.ReadFile(file)

	t.Setenv("BROWSER", "/nonexistent/browser") // no browser from now on
	r = mcp("list")
	r.expect(t, ExitOK, "connected", "")
	p2 := mcp("probe", "hosted", "--json")
	p2.expect(t, ExitOK, `"stage": "ok"`, "")
	for _, out := range []string{r.stdout, r.stderr, p2.stdout, p2.stderr, mcp("list", "--json").stdout} {
		for _, tok := range tokensIn(string(stored)) {
			if strings.Contains(out, tok) {
				t.Fatal("a token was printed")
			}
		}
	}

	mcp("logout", "hosted").expect(t, ExitOK, "hosted: logged out", "")
	mcp("list").expect(t, ExitOK, "needs-auth", "")
	mcp("login", "local").expect(t, ExitFailure, "", "does not use OAuth")
	mcp("login", "nosuch").expect(t, ExitFailure, "", `no MCP server "nosuch"`)

	// --no-browser prints the URL; the test follows it as the user would.
	var stdout strings.Builder
	stderr := &urlFollower{t: t}
	cx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code := testOptions().Run(cx, append([]string{"-p", profile, "mcp", "login", "hosted", "--no-browser"}, noHost(t)...),
		strings.NewReader(""), &stdout, stderr, nil)
	stderr.wg.Wait()
	if code != ExitOK || !strings.Contains(stdout.String(), "hosted: logged in") || !strings.Contains(stderr.String(), "open this URL") {
		t.Fatalf("login --no-browser: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
}

// urlFollower is a stderr that opens the first printed authorization URL in the test
// browser, as a user would paste it.
type urlFollower struct {
	t    *testing.T
	mu   sync.Mutex
	buf  strings.Builder
	once sync.Once
	wg   sync.WaitGroup
}

func (w *urlFollower) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(b)
	for _, line := range strings.Split(w.buf.String(), "\n") {
		if u := strings.TrimSpace(line); strings.HasPrefix(u, "http://") && strings.HasPrefix(line, "  ") {
			w.once.Do(func() {
				w.wg.Add(1)
				go func() {
					defer w.wg.Done()
					if err := oauthtest.Browse(context.Background(), u); err != nil {
						w.t.Errorf("browse: %v", err)
					}
				}()
			})
		}
	}
	return len(b), nil
}

func (w *urlFollower) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// tokensIn returns the access and refresh token values of a credentials file.
func tokensIn(doc string) []string {
	var out []string
	for _, key := range []string{`"access_token": "`, `"refresh_token": "`} {
		rest := doc
		for {
			i := strings.Index(rest, key)
			if i < 0 {
				break
			}
			rest = rest[i+len(key):]
			if j := strings.IndexByte(rest, '"'); j > 0 {
				out = append(out, rest[:j])
			}
		}
	}
	return out
}

// profile show masks the oauth block's secrets like header values.
func TestProfileShowRedactsOAuthSecrets(t *testing.T) {
	t.Parallel()
	p := writeFile(t, t.TempDir(), "p.yaml", "extends: cli\nplugins:\n  svc:\n    use: mcpclient\n    config:\n      serverName: svc\n      transport: streamable-http\n      url: https://mcp.example.com/mcp\n      oauth: {grant: client_credentials, clientId: svc-client, clientSecret: cl1ent-s3cret-value, idpClientSecret: idp-s3cret-value}\n")
	r := run(t, nil, "-p", p, "profile", "show")
	r.expect(t, ExitOK, "clientId: svc-client", "")
	if strings.Contains(r.stdout, "s3cret") {
		t.Fatalf("profile show leaks an oauth secret:\n%s", r.stdout)
	}
}
