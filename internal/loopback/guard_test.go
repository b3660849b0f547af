package loopback_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cordisgo/harness/internal/loopback"
)

func request(host string, origins ...string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Host = host
	for _, o := range origins {
		r.Header.Add("Origin", o)
	}
	return r
}

func TestHost(t *testing.T) {
	g := loopback.New(loopback.Options{Addr: "192.168.1.2:80", Hosts: []string{"devbox.lan", "Build.Example.:8080"}})
	for _, tc := range []struct {
		host string
		ok   bool
	}{
		{"127.0.0.1:7100", true},
		{"127.0.0.2", true},
		{"[::1]:7100", true},
		{"LOCALHOST:7100", true},
		{"192.168.1.2:80", true}, // the listening address
		{"devbox.lan:7100", true},
		{"DEVBOX.LAN.", true},
		{"build.example", true},
		{"", false},
		{"evil.example", false},           // DNS rebinding: a name that resolves to 127.0.0.1
		{"localhost.evil.example", false}, // ... that starts like the loopback's
		{"127.0.0.1.nip.io:7100", false},
		{"10.0.0.1:7100", false}, // an address, but not AnyIP
		{"[fe80::1%25eth0]", false},
	} {
		if got := g.Host(tc.host); got != tc.ok {
			t.Errorf("Host(%q) = %v, want %v", tc.host, got, tc.ok)
		}
		if err := g.Check(request(tc.host)); (err == nil) != tc.ok || err != nil && !errors.Is(err, loopback.ErrHost) {
			t.Errorf("Check(Host %q) = %v", tc.host, err)
		}
	}
	anyIP := loopback.New(loopback.Options{AnyIP: true})
	if !anyIP.Host("10.0.0.1:7100") || !anyIP.Host("[2001:db8::1]:80") || anyIP.Host("evil.example") {
		t.Error("AnyIP: addresses accepted, names refused")
	}
	wild := loopback.New(loopback.Options{Addr: "0.0.0.0:7100"})
	if wild.Host("0.0.0.0:7100") {
		t.Error("the unspecified address of a wildcard listener accepted as a Host")
	}
}

func TestOrigin(t *testing.T) {
	g := loopback.New(loopback.Options{Addr: "127.0.0.1:7100", Hosts: []string{"devbox.lan"}, Origins: []string{"https://app.example/"}})
	for _, tc := range []struct {
		origin string
		ok     bool
	}{
		{"http://127.0.0.1:3000", true},
		{"http://localhost", true},
		{"https://[::1]:8443", true},
		{"https://app.example", true}, // listed (the trailing slash ignored)
		{"HTTPS://APP.EXAMPLE", true},
		{"https://evil.example", false},
		{"http://devbox.lan:7100", false}, // a Host name, but not HostOrigins
		{"null", false},
		{"file://", false},
		{"http://user@localhost:3000", false},
		{"http://localhost:3000/path", false},
		{"http://localhost.evil.example", false},
	} {
		if got := g.Origin(tc.origin); got != tc.ok {
			t.Errorf("Origin(%q) = %v, want %v", tc.origin, got, tc.ok)
		}
		if err := g.Check(request("127.0.0.1:7100", tc.origin)); (err == nil) != tc.ok || err != nil && !errors.Is(err, loopback.ErrOrigin) {
			t.Errorf("Check(Origin %q) = %v", tc.origin, err)
		}
	}
	if err := g.Check(request("127.0.0.1:7100", "http://localhost", "http://localhost")); !errors.Is(err, loopback.ErrOrigin) {
		t.Errorf("two Origin headers: %v", err)
	}
	if err := g.Check(request("127.0.0.1:7100")); err != nil {
		t.Errorf("no Origin (not a browser): %v", err)
	}
	hosts := loopback.New(loopback.Options{Hosts: []string{"devbox.lan"}, HostOrigins: true})
	if !hosts.Origin("http://devbox.lan:7100") || hosts.Origin("http://other.lan") {
		t.Error("HostOrigins: an Origin on an accepted Host name")
	}
}

func TestBearer(t *testing.T) {
	g := loopback.New(loopback.Options{Token: "s3cret"})
	for _, tc := range []struct {
		header string
		ok     bool
	}{
		{"Bearer s3cret", true},
		{"bearer s3cret", true},
		{"BEARER  s3cret ", true},
		{"", false},            // missing
		{"Bearer", false},      // no credentials
		{"Bearer nope", false}, // wrong
		{"Bearer s3cret2", false},
		{"Basic s3cret", false},
		{"s3cret", false},
	} {
		if got := g.Bearer(tc.header); got != tc.ok {
			t.Errorf("Bearer(%q) = %v, want %v", tc.header, got, tc.ok)
		}
		r := request("127.0.0.1")
		if tc.header != "" {
			r.Header.Set("Authorization", tc.header)
		}
		if got := g.Authorized(r); got != tc.ok {
			t.Errorf("Authorized(%q) = %v, want %v", tc.header, got, tc.ok)
		}
	}
	if loopback.New(loopback.Options{}).Bearer("Bearer ") {
		t.Error("a guard without a token authorized an empty one")
	}
}

func TestStatus(t *testing.T) {
	for err, want := range map[error]int{nil: 200, loopback.ErrHost: 403, loopback.ErrOrigin: 403, loopback.ErrToken: 401, errors.New("x"): 500} {
		if got := loopback.Status(err); got != want {
			t.Errorf("Status(%v) = %d, want %d", err, got, want)
		}
	}
}

// A token file's content is the token without its white space; an empty or missing file is
// an error.
func TestReadToken(t *testing.T) {
	dir := t.TempDir()
	full, empty := filepath.Join(dir, "token"), filepath.Join(dir, "empty")
	if err := os.WriteFile(full, []byte("  s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if tok, err := loopback.ReadToken(full); tok != "s3cret" || err != nil {
		t.Fatalf("token: %q %v", tok, err)
	}
	for _, p := range []string{empty, filepath.Join(dir, "missing")} {
		if _, err := loopback.ReadToken(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v, want an error naming it", p, err)
		}
	}
}
