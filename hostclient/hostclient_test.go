package hostclient_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cordisgo/harness/hostclient"
)

// No endpoint file is no host (os.ErrNotExist); an endpoint file whose host is not
// listening is one that does not answer.
func TestDial(t *testing.T) {
	dir := t.TempDir()
	if _, err := hostclient.Dial(context.Background(), filepath.Join(dir, "none.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("no endpoint file: %v", err)
	}
	tok := filepath.Join(dir, "token")
	if err := os.WriteFile(tok, []byte("00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"), 0o600); err != nil {
		t.Fatal(err)
	}
	ep := filepath.Join(dir, "endpoint.json")
	if err := os.WriteFile(ep, []byte(`{"url": "http://127.0.0.1:1", "tokenFile": "`+tok+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := hostclient.Dial(context.Background(), ep); !errors.Is(err, hostclient.ErrNoAnswer) {
		t.Fatalf("a host that does not answer: %v", err)
	}
}
