package hostclient_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	ep := silentEndpoint(t, dir)
	if _, err := hostclient.Dial(context.Background(), ep); !errors.Is(err, hostclient.ErrNoAnswer) {
		t.Fatalf("a host that does not answer: %v", err)
	}
}

// silentEndpoint writes an endpoint file in dir whose host is not listening.
func silentEndpoint(t *testing.T, dir string) string {
	t.Helper()
	tok := filepath.Join(dir, "token")
	if err := os.WriteFile(tok, []byte("00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"), 0o600); err != nil {
		t.Fatal(err)
	}
	ep := filepath.Join(dir, "endpoint.json")
	if err := os.WriteFile(ep, []byte(`{"url": "http://127.0.0.1:1", "tokenFile": "`+tok+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return ep
}

// Find works in process without an endpoint file, says so when the file's host does not
// answer, and with Required makes both a *NoHostError; InProcess looks for nothing.
func TestFind(t *testing.T) {
	dir := t.TempDir()
	var notes []string
	note := func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }
	missing := hostclient.FindOptions{EndpointFile: filepath.Join(dir, "none.json"), Note: note}
	if h, err := hostclient.Find(context.Background(), missing); h != nil || err != nil || len(notes) != 0 {
		t.Fatalf("no endpoint file: %v %v %q", h, err, notes)
	}
	missing.Required = true
	if _, err := hostclient.Find(context.Background(), missing); !isNoHost(err) || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("no endpoint file, required: %v", err)
	}
	if h, err := hostclient.Find(context.Background(), hostclient.FindOptions{InProcess: true, Required: true}); h != nil || err != nil {
		t.Fatalf("in process: %v %v", h, err)
	}
	ep := silentEndpoint(t, dir)
	silent := hostclient.FindOptions{EndpointFile: ep, Note: note}
	if h, err := hostclient.Find(context.Background(), silent); h != nil || err != nil || len(notes) != 1 || !strings.HasSuffix(notes[0], "; working in process") {
		t.Fatalf("a host that does not answer: %v %v %q", h, err, notes)
	}
	silent.Required = true
	if _, err := hostclient.Find(context.Background(), silent); !isNoHost(err) {
		t.Fatalf("a host that does not answer, required: %v", err)
	}
}

func isNoHost(err error) bool {
	_, ok := errors.AsType[*hostclient.NoHostError](err)
	return ok
}
