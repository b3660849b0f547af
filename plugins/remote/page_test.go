package remote_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/cordisgo/harness/plugins/remote"
)

// session exchanges the token for the page's cookie, as the page does.
func (h *host) session(t *testing.T) *http.Cookie {
	t.Helper()
	hdr := h.auth()
	hdr.Set("Origin", h.srv.URL())
	resp, body := raw(t, http.MethodPost, h.srv.URL()+remote.SessionPath, "", hdr)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("session: %d %s", resp.StatusCode, body)
	}
	cs := resp.Cookies()
	if len(cs) != 1 {
		t.Fatalf("session: cookies %v", cs)
	}
	c := cs[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Secure {
		t.Fatalf("session cookie attributes: %+v", c)
	}
	if strings.Contains(c.Value, h.srv.Token()) {
		t.Fatal("the cookie carries the token")
	}
	return c
}

func cookieHeader(c *http.Cookie, origin string) http.Header {
	hdr := http.Header{"Cookie": {c.Name + "=" + c.Value}}
	if origin != "" {
		hdr.Set("Origin", origin)
	}
	return hdr
}

func TestPageServedWithoutToken(t *testing.T) {
	h := newHost(t, nil)
	for _, p := range []string{"/", "/index.html", "/app.js", "/app.css", "/icon.svg"} {
		resp, body := raw(t, http.MethodGet, h.srv.URL()+p, "", nil)
		if resp.StatusCode != http.StatusOK || body == "" {
			t.Fatalf("%s: %d", p, resp.StatusCode)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Fatalf("%s: CSP %q", p, csp)
		}
	}
	resp, body := raw(t, http.MethodGet, h.srv.URL()+"/", "", nil)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(body, "/app.js") {
		t.Fatalf("/: %s %q", resp.Header.Get("Content-Type"), body[:min(len(body), 200)])
	}
	if strings.Contains(body, h.srv.Token()) {
		t.Fatal("the page carries the token")
	}
	// The page's files are the only ones served without a token.
	resp, body = raw(t, http.MethodGet, h.srv.URL()+"/secret.txt", "", nil)
	wantError(t, resp, body, http.StatusUnauthorized, remote.CodeUnauthorized)
	resp, body = raw(t, http.MethodPost, h.srv.URL()+"/", "", nil)
	wantError(t, resp, body, http.StatusMethodNotAllowed, remote.CodeMethodNotAllowed)
	// A rebinding host gets no page either.
	resp, body = raw(t, http.MethodGet, h.srv.URL()+"/", "", http.Header{"Host": {"evil.example"}})
	wantError(t, resp, body, http.StatusForbidden, remote.CodeForbiddenHost)
}

func TestPageURL(t *testing.T) {
	h := newHost(t, nil)
	if got, want := h.srv.PageURL(), h.srv.URL()+"/#token="+h.srv.Token(); got != want {
		t.Fatalf("PageURL %q, want %q", got, want)
	}
}

func TestSessionExchange(t *testing.T) {
	h := newHost(t, nil)
	u := h.srv.URL() + remote.SessionPath
	own := h.srv.URL()
	for name, tc := range map[string]struct {
		hdr    http.Header
		status int
		code   string
	}{
		"no token":       {http.Header{"Origin": {own}}, http.StatusUnauthorized, remote.CodeUnauthorized},
		"wrong token":    {http.Header{"Origin": {own}, "Authorization": {"Bearer " + strings.Repeat("0", 64)}}, http.StatusUnauthorized, remote.CodeUnauthorized},
		"no origin":      {h.auth(), http.StatusForbidden, remote.CodeForbiddenOrigin},
		"foreign origin": {http.Header{"Origin": {"http://evil.example"}, "Authorization": h.auth()["Authorization"]}, http.StatusForbidden, remote.CodeForbiddenOrigin},
		"other port":     {http.Header{"Origin": {"http://127.0.0.1:1"}, "Authorization": h.auth()["Authorization"]}, http.StatusForbidden, remote.CodeForbiddenOrigin},
		"foreign host":   {http.Header{"Origin": {own}, "Host": {"evil.example"}, "Authorization": h.auth()["Authorization"]}, http.StatusForbidden, remote.CodeForbiddenHost},
	} {
		t.Run(name, func(t *testing.T) {
			resp, body := raw(t, http.MethodPost, u, "", tc.hdr)
			wantError(t, resp, body, tc.status, tc.code)
			if len(resp.Cookies()) != 0 {
				t.Fatal("a refused exchange set a cookie")
			}
		})
	}
	resp, body := raw(t, http.MethodGet, u, "", h.auth())
	wantError(t, resp, body, http.StatusMethodNotAllowed, remote.CodeMethodNotAllowed)
	h.noSecretInLog(t)
}

func TestSessionCookie(t *testing.T) {
	h := newHost(t, nil)
	c := h.session(t)
	own := h.srv.URL()
	call := h.srv.URL() + "/v1/call/svc/echo"

	// The cookie works from the page's origin, for calls, streams and the method list.
	resp, body := raw(t, http.MethodPost, call, "7", cookieHeader(c, own))
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"result":7`) {
		t.Fatalf("call with the cookie: %d %s", resp.StatusCode, body)
	}
	resp, body = raw(t, http.MethodGet, h.srv.URL()+"/v1/stream/svc/count?params=2", "", cookieHeader(c, ""))
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "event: end") {
		t.Fatalf("stream with the cookie: %d %s", resp.StatusCode, body)
	}
	resp, _ = raw(t, http.MethodGet, h.srv.URL()+"/v1/methods", "", cookieHeader(c, own))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("methods with the cookie: %d", resp.StatusCode)
	}

	// A state-changing request with the cookie must come from the page's own origin.
	for name, origin := range map[string]string{
		"no origin":      "",
		"foreign origin": "http://evil.example",
		"other port":     "http://127.0.0.1:1",
		"other host":     "http://localhost:" + strings.Split(h.srv.Addr(), ":")[1],
		"https":          "https://" + h.srv.Addr(),
	} {
		t.Run(name, func(t *testing.T) {
			resp, body := raw(t, http.MethodPost, call, "7", cookieHeader(c, origin))
			wantError(t, resp, body, http.StatusForbidden, remote.CodeForbiddenOrigin)
		})
	}
	// A read from another loopback origin cannot use the cookie either.
	resp, body = raw(t, http.MethodGet, h.srv.URL()+"/v1/methods", "", cookieHeader(c, "http://127.0.0.1:1"))
	wantError(t, resp, body, http.StatusForbidden, remote.CodeForbiddenOrigin)

	// A request the browser marks as coming from another site (an image or a link on a
	// page of another loopback port: same-site, since cookies ignore ports) is refused,
	// GET included; the page's own (same-origin) and the user's (none) pass.
	for fetchSite, status := range map[string]int{"same-site": http.StatusForbidden, "cross-site": http.StatusForbidden,
		"same-origin": http.StatusOK, "none": http.StatusOK} {
		hdr := cookieHeader(c, "")
		hdr.Set("Sec-Fetch-Site", fetchSite)
		resp, body = raw(t, http.MethodGet, h.srv.URL()+"/v1/stream/svc/count?params=1", "", hdr)
		if resp.StatusCode != status {
			t.Fatalf("a stream with Sec-Fetch-Site %s: %d %s, want %d", fetchSite, resp.StatusCode, body, status)
		}
	}

	// Wrong cookies, and the right value under another host's name, are refused.
	bad := &http.Cookie{Name: c.Name, Value: strings.Repeat("0", len(c.Value))}
	resp, body = raw(t, http.MethodPost, call, "7", cookieHeader(bad, own))
	wantError(t, resp, body, http.StatusUnauthorized, remote.CodeUnauthorized)
	other := &http.Cookie{Name: "harness_session_1", Value: c.Value}
	resp, body = raw(t, http.MethodPost, call, "7", cookieHeader(other, own))
	wantError(t, resp, body, http.StatusUnauthorized, remote.CodeUnauthorized)
	// A foreign Host is refused before the cookie is looked at.
	hdr := cookieHeader(c, own)
	hdr.Set("Host", "evil.example")
	resp, body = raw(t, http.MethodPost, call, "7", hdr)
	wantError(t, resp, body, http.StatusForbidden, remote.CodeForbiddenHost)
}

func TestSessionCookieDiesWithTheToken(t *testing.T) {
	h := newHost(t, nil)
	c := h.session(t)
	h2 := newHost(t, nil) // another load: another token
	_, port, _ := strings.Cut(h2.srv.Addr(), ":")
	moved := &http.Cookie{Name: "harness_session_" + port, Value: c.Value}
	resp, body := raw(t, http.MethodPost, h2.srv.URL()+"/v1/call/svc/echo", "1", cookieHeader(moved, h2.srv.URL()))
	wantError(t, resp, body, http.StatusUnauthorized, remote.CodeUnauthorized)
}
