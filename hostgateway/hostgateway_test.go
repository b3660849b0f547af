package hostgateway_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/hostgateway"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The kept token is made once (mode 0600), read again after, replaced on rotate, and
// refused when others can read its file.
func TestKeptToken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gateway.token")
	tok, err := hostgateway.KeptToken(path, false)
	if err != nil || tok == "" {
		t.Fatalf("new token: %q %v", tok, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", fi, err)
	}
	if again, err := hostgateway.KeptToken(path, false); err != nil || again != tok {
		t.Fatalf("kept token: %q %v, want %q", again, err, tok)
	}
	if rotated, err := hostgateway.KeptToken(path, true); err != nil || rotated == tok {
		t.Fatalf("rotated token: %q %v", rotated, err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := hostgateway.KeptToken(path, false); err == nil || !strings.Contains(err.Error(), "expected 0600") {
		t.Fatalf("a readable token file: %v", err)
	}
}

// A client's configuration names the URL and the token; an unknown client is an
// *UnknownClientError.
func TestPrintClientConfig(t *testing.T) {
	var b bytes.Buffer
	if err := hostgateway.PrintClientConfig(&b, "claude", "http://127.0.0.1:8931/mcp", "tok"); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); !strings.Contains(got, "claude mcp add --transport http harness http://127.0.0.1:8931/mcp --header 'Authorization: Bearer tok'") {
		t.Fatalf("claude: %s", got)
	}
	err := hostgateway.PrintClientConfig(&b, "claud", "http://127.0.0.1:8931/mcp", "")
	if _, ok := errors.AsType[*hostgateway.UnknownClientError](err); !ok {
		t.Fatalf("unknown client: %v", err)
	}
}

// A configuration's options: the kept token in the configuration directory and the endpoint
// file next to it by default, an idle timeout of 0 as never, no token with --access; what the
// command line gets wrong is an *OptionsError.
func TestConfigOptions(t *testing.T) {
	dir := t.TempDir()
	c := hostgateway.Config{Addr: "127.0.0.1:0", Token: hostgateway.TokenOptions{Dir: dir}}
	o, err := c.Options()
	if err != nil {
		t.Fatal(err)
	}
	kept, _ := os.ReadFile(filepath.Join(dir, hostgateway.TokenFileName))
	if o.HTTP.Token == "" || o.HTTP.Token != strings.TrimSpace(string(kept)) || o.HTTP.SessionIdleTimeout != -1 ||
		o.EndpointFile != filepath.Join(dir, hostgateway.EndpointFileName) {
		t.Fatalf("options: %+v", o)
	}
	c.Access = "access.yaml"
	if o, err := c.Options(); err != nil || o.HTTP.Token != "" || o.Access != "access.yaml" {
		t.Fatalf("with --access: %+v %v", o, err)
	}
	for name, bad := range map[string]hostgateway.Config{
		"no-auth with access":  {Addr: "127.0.0.1:0", NoAuth: true, Access: "access.yaml", Token: hostgateway.TokenOptions{Dir: dir}},
		"no-auth off loopback": {Addr: "0.0.0.0:0", NoAuth: true, Token: hostgateway.TokenOptions{Dir: dir}},
		"no directory":         {Addr: "127.0.0.1:0", Token: hostgateway.TokenOptions{File: filepath.Join(dir, hostgateway.TokenFileName), DirErr: errors.New("none")}},
	} {
		if _, err := bad.Options(); !isOptionsError(err) {
			t.Errorf("%s: %v, want an *OptionsError", name, err)
		}
	}
}

func isOptionsError(err error) bool {
	_, ok := errors.AsType[*hostgateway.OptionsError](err)
	return ok
}
