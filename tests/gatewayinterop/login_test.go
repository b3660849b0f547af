//go:build unix

package gatewayinterop

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cordisgo/harness/internal/oauthtest"
	"github.com/cordisgo/harness/testkit/harnessbin"
)

// loginRun is one run of `harness mcp login … --gateway URL`.
type loginRun struct {
	code           int
	stdout, stderr string
	urls           int // the authorization URLs it printed, each followed in the test browser
}

// TestMCPLoginGateway: `harness mcp login hosted --gateway URL`, the built binary as a
// person runs it, against a team's gateway whose personal server hosted is behind its own
// authorization (newPersonalFleet). With --no-browser it prints each URL to open, and the
// test follows each in the test browser as alice: the command signs her in to the gateway
// (the team's identity provider), then to hosted, and hands hosted's login to the gateway.
// Her calls of hosted's whoami through the gateway then run with her login. Her machine
// keeps her gateway login, so a second run asks for hosted's login only, and none of
// hosted's tokens (the gateway keeps those, sealed). A server the gateway has no personal
// server of is refused with the names it has.
func TestMCPLoginGateway(t *testing.T) {
	f := newPersonalFleet(t)
	bin := harnessbin.Path(t)
	home := t.TempDir()
	state := filepath.Join(home, "state")
	login := func(name string) loginRun {
		t.Helper()
		cx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(cx, bin, "mcp", "login", name, "--gateway", f.url, "--no-browser")
		cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_STATE_HOME="+state,
			"XDG_CACHE_HOME="+filepath.Join(home, "cache"), "XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_RUNTIME_DIR="+home,
			"BROWSER=/nonexistent/browser")
		var stdout strings.Builder
		cmd.Stdout = &stdout
		errPipe, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var r loginRun
		var stderr strings.Builder
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			line := sc.Text()
			stderr.WriteString(line + "\n")
			// "To log in to NAME, open this URL in a browser on this machine:\n  URL"
			if u := strings.TrimSpace(line); strings.HasPrefix(line, "  ") && strings.HasPrefix(u, "http") {
				r.urls++
				if err := oauthtest.BrowseAs(cx, u, "alice"); err != nil {
					t.Errorf("following %s: %v", u, err)
				}
			}
		}
		err = cmd.Wait()
		r.code, r.stdout, r.stderr = cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
		if err != nil && r.code == 0 {
			t.Fatal(err)
		}
		return r
	}

	r := login("hosted")
	if r.code != 0 || !strings.Contains(r.stdout, "hosted: logged in through the gateway "+f.url) || r.urls != 2 {
		t.Fatalf("mcp login hosted --gateway: exit %d, %d URLs followed (want 2: the gateway's sign-in, then hosted's)\nstdout:\n%s\nstderr:\n%s", r.code, r.urls, r.stdout, r.stderr)
	}
	alice := f.signIn("alice")
	if got, ok := f.whoami(alice); !ok || !strings.HasPrefix(got, "user=alice") {
		t.Fatalf("alice's whoami after mcp login --gateway: %q ok=%v", got, ok)
	}
	f.vaultHoldsNoToken(1)
	creds, err := os.ReadFile(filepath.Join(state, "harness", "credentials.json"))
	if err != nil {
		t.Fatalf("alice's gateway login is not kept: %v", err)
	}
	for _, tok := range f.hosted.Tokens() {
		if strings.Contains(string(creds), tok) {
			t.Fatal("the credentials file holds a token of hosted: only the gateway may keep those")
		}
	}
	for _, out := range []string{r.stdout, r.stderr} {
		for _, tok := range f.hosted.Tokens() {
			if strings.Contains(out, tok) {
				t.Fatal("mcp login printed a token of hosted")
			}
		}
	}

	// Her gateway login is kept: a second login asks for hosted's only.
	if r := login("hosted"); r.code != 0 || r.urls != 1 {
		t.Fatalf("a second mcp login hosted --gateway: exit %d, %d URLs followed (want 1: hosted's)\nstdout:\n%s\nstderr:\n%s", r.code, r.urls, r.stdout, r.stderr)
	}
	if got, ok := f.whoami(alice); !ok || !strings.HasPrefix(got, "user=alice") {
		t.Fatalf("alice's whoami after her second login: %q ok=%v", got, ok)
	}

	r = login("nosuch")
	if r.code == 0 || !strings.Contains(r.stderr, `no personal server "nosuch" (personal servers: hosted)`) || r.urls != 0 {
		t.Fatalf("mcp login nosuch --gateway: exit %d, %d URLs\nstdout:\n%s\nstderr:\n%s", r.code, r.urls, r.stdout, r.stderr)
	}
}
