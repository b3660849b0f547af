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
