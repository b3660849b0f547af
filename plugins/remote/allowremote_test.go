package remote_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/cordisgo/harness/plugins/remote"
)

// A host with allowRemote on every interface: local clients dial the loopback; requests
// naming the host by an IP literal or a listed name are served, other names are refused
// (DNS rebinding); the page's cookie works from the page's own origin on that address.
func TestAllowRemote(t *testing.T) {
	h := newHost(t, map[string]any{"addr": "0.0.0.0:0", "allowRemote": true, "allowedHosts": []any{"DevBox.lan"}})
	if !strings.HasPrefix(h.srv.ListenAddr(), "0.0.0.0:") || !strings.HasPrefix(h.srv.Addr(), "127.0.0.1:") {
		t.Fatalf("listen %s, dial %s", h.srv.ListenAddr(), h.srv.Addr())
	}
	if err := h.client.Call(t.Context(), "svc/echo", 1, nil); err != nil {
		t.Fatalf("a local client: %v", err)
	}
	if !strings.Contains(h.log.String(), "unencrypted") {
		t.Fatalf("no warning about listening beyond the loopback:\n%s", h.log.String())
	}
	_, port, _ := strings.Cut(h.srv.Addr(), ":")
	call := h.srv.URL() + "/v1/call/svc/echo"

	for host, status := range map[string]int{
		"192.0.2.7:" + port:     http.StatusOK,
		"[2001:db8::7]:" + port: http.StatusOK,
		"devbox.lan:" + port:    http.StatusOK,
		"devbox.lan.:" + port:   http.StatusOK,
		"evil.example:" + port:  http.StatusForbidden,
		"lan:" + port:           http.StatusForbidden,
	} {
		hdr := h.auth()
		hdr.Set("Host", host)
		resp, body := raw(t, http.MethodPost, call, "1", hdr)
		if resp.StatusCode != status {
			t.Errorf("Host %s: %d %s, want %d", host, resp.StatusCode, body, status)
		}
		if status == http.StatusForbidden {
			wantError(t, resp, body, status, remote.CodeForbiddenHost)
		}
	}

	// The page from http://192.0.2.7:port: the session and its cookie work from that
	// origin, and from no other.
	pageHost := "192.0.2.7:" + port
	hdr := h.auth()
	hdr.Set("Host", pageHost)
	hdr.Set("Origin", "http://"+pageHost)
	resp, body := raw(t, http.MethodPost, h.srv.URL()+remote.SessionPath, "", hdr)
	if resp.StatusCode != http.StatusOK || len(resp.Cookies()) != 1 {
		t.Fatalf("session from %s: %d %s", pageHost, resp.StatusCode, body)
	}
	c := resp.Cookies()[0]
	for origin, status := range map[string]int{
		"http://" + pageHost:        http.StatusOK,
		"http://192.0.2.8:" + port:  http.StatusForbidden,
		"http://evil.example":       http.StatusForbidden,
		"http://devbox.lan:" + port: http.StatusForbidden,
	} {
		hdr := cookieHeader(c, origin)
		hdr.Set("Host", pageHost)
		resp, body := raw(t, http.MethodPost, call, "1", hdr)
		if resp.StatusCode != status {
			t.Errorf("cookie call from %s: %d %s, want %d", origin, resp.StatusCode, body, status)
		}
	}
	h.noSecretInLog(t)
}

// Without allowRemote, an IP literal that is not the loopback is a foreign host.
func TestLoopbackOnlyRefusesOtherIPs(t *testing.T) {
	h := newHost(t, nil)
	hdr := h.auth()
	hdr.Set("Host", "192.0.2.7:80")
	resp, body := raw(t, http.MethodPost, h.srv.URL()+"/v1/call/svc/echo", "1", hdr)
	wantError(t, resp, body, http.StatusForbidden, remote.CodeForbiddenHost)
	if h.srv.ListenAddr() != h.srv.Addr() {
		t.Fatalf("listen %s, dial %s", h.srv.ListenAddr(), h.srv.Addr())
	}
}
