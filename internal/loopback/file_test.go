package loopback_test

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cordisgo/harness/internal/loopback"
)

func TestWriteAndRemoveFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "host.json")
	if err := loopback.WriteFile(path, []byte("one\n")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %04o, want 0600", fi.Mode().Perm())
	}
	if di, _ := os.Stat(filepath.Dir(path)); di.Mode().Perm() != 0o700 {
		t.Fatalf("directory mode %04o, want 0700", di.Mode().Perm())
	}
	if err := loopback.WriteFile(path, []byte("two\n")); err != nil { // replaced whole
		t.Fatal(err)
	}
	if err := loopback.RemoveFile(path, []byte("one\n")); err != nil { // another host's now
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "two\n" {
		t.Fatalf("another host's file removed or changed: %q", b)
	}
	if err := loopback.RemoveFile(path, []byte("two\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("own file left: %v", err)
	}
	if err := loopback.RemoveFile(path, []byte("two\n")); err != nil {
		t.Fatalf("removing a file that is gone: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 0 {
		t.Fatalf("temporary files left: %v", entries)
	}
}

func TestHeld(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, ep loopback.Endpoint) string {
		b, _ := json.Marshal(ep)
		p := filepath.Join(dir, name)
		if err := loopback.WriteFile(p, b); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ln, err := loopback.Listen("localhost:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	url := "http://" + ln.Addr().String()
	if ep, ok := loopback.Held(write("live.json", loopback.Endpoint{URL: url, PID: os.Getpid()})); !ok || ep.URL != url {
		t.Fatalf("a running host's file: %+v %v", ep, ok)
	}
	// A process that has ended.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if _, ok := loopback.Held(write("dead.json", loopback.Endpoint{URL: url, PID: cmd.Process.Pid})); ok {
		t.Fatal("the file of a host whose process ended is held")
	}
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "http://" + closed.Addr().String()
	_ = closed.Close()
	if _, ok := loopback.Held(write("reused.json", loopback.Endpoint{URL: closedURL, PID: os.Getpid()})); ok {
		t.Fatal("a file whose address accepts no connection (a reused pid) is held")
	}
	for name, body := range map[string]string{"garbage.json": "{", "nopid.json": `{"url": "` + url + `"}`} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, ok := loopback.Held(p); ok {
			t.Fatalf("%s is held", name)
		}
	}
	if _, ok := loopback.Held(filepath.Join(dir, "missing.json")); ok {
		t.Fatal("a missing file is held")
	}
}

func TestListen(t *testing.T) {
	ln, err := loopback.Listen("localhost:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	if host, _, _ := net.SplitHostPort(ln.Addr().String()); host != "127.0.0.1" {
		t.Fatalf("localhost listened on %s, want 127.0.0.1", ln.Addr())
	}
	if got := loopback.DialAddr("localhost:0", ln.Addr()); got != ln.Addr().String() {
		t.Fatalf("DialAddr of a loopback listener %q", got)
	}
	wild, err := loopback.Listen("0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = wild.Close() }()
	_, port, _ := net.SplitHostPort(wild.Addr().String())
	if got := loopback.DialAddr("0.0.0.0:0", wild.Addr()); got != "127.0.0.1:"+port {
		t.Fatalf("DialAddr of 0.0.0.0 = %q", got)
	}
	if got := loopback.DialAddr("[::]:0", &net.TCPAddr{IP: net.IPv6unspecified, Port: 7}); got != "[::1]:7" {
		t.Fatalf("DialAddr of [::] = %q", got)
	}
	if got := loopback.DialAddr(":0", &net.TCPAddr{IP: net.IPv6unspecified, Port: 7}); got != "127.0.0.1:7" {
		t.Fatalf("DialAddr of :0 = %q", got)
	}
	for addr, want := range map[string]bool{"127.0.0.1:0": true, "localhost:80": true, "[::1]:80": true, "::1": true,
		"127.9.9.9:1": true, "0.0.0.0:80": false, ":80": false, "192.168.1.2:80": false, "example.com:80": false} {
		if got := loopback.IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}
