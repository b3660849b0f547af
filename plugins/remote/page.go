package remote

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/cordisgo/harness/plugins/remote/web"
)

// SessionPath is where the management page exchanges the token for a session cookie:
// POST with "Authorization: Bearer <token>" and an Origin equal to the page's own.
const SessionPath = "/v1/session"

// pageCSP confines the page to its own files and its own API: no inline script, no
// foreign connection, nobody may frame it, and it frames only the apps' sandbox (sandbox,
// the sandbox listener's origin on the host the request named). Tool results may show
// images as data: URLs.
func pageCSP(sandbox string) string {
	frames := "'none'"
	if sandbox != "" {
		frames = sandbox
	}
	return "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src data:; " +
		"connect-src 'self'; frame-src " + frames + "; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}

// sandboxOrigin is the origin of the apps' sandbox for a page loaded from host (a Host
// header): the same host name on the sandbox listener's port; "" without a sandbox.
func (h *handler) sandboxOrigin(host string) string {
	if h.sandboxPort == "" {
		return ""
	}
	return originOn(host, h.sandboxPort)
}

// originOn is the http origin of the host named by a Host header on another port.
func originOn(host, port string) string {
	name, _, err := net.SplitHostPort(host)
	if err != nil {
		name = host
	}
	return "http://" + net.JoinHostPort(strings.Trim(name, "[]"), port)
}

// sandboxURL is the sandbox proxy's URL for a page loaded from host; "" without a sandbox.
func (h *handler) sandboxURL(host string) string {
	if o := h.sandboxOrigin(host); o != "" {
		return o + SandboxPath
	}
	return ""
}

// PageURL returns the URL of the management page with the token in its fragment, which
// browsers never send to the server (so it reaches no access log); the page exchanges it
// for a session cookie and removes it from the address bar. The URL is a credential: print
// it to the user, never log it.
func (s *Server) PageURL() string { return pageURL(s.URL(), s.token) }

// pageURL is the page's URL on the server at base: its token travels in the fragment.
func pageURL(base, token string) string { return base + "/#token=" + token }

// EndpointPageURL is the management page's URL of the host whose endpoint file is path
// (ReadEndpoint).
func EndpointPageURL(path string) (string, error) {
	base, token, err := ReadEndpoint(path)
	if err != nil {
		return "", err
	}
	return pageURL(base, token), nil
}

// sessionCookieName is the cookie's name for the host listening on hostPort. Cookies do
// not isolate ports, so two hosts on one machine get two names.
func sessionCookieName(hostPort string) string {
	_, port, err := net.SplitHostPort(hostPort)
	if err != nil || port == "" {
		port = "80"
	}
	return "harness_session_" + port
}

// sessionValue derives the cookie's value from the token: a new token (every load)
// invalidates every cookie, and the cookie never is the token itself.
func sessionValue(token []byte) string {
	m := hmac.New(sha256.New, token)
	m.Write([]byte("harness management page session"))
	return hex.EncodeToString(m.Sum(nil))
}

// sameOrigin reports whether r carries an Origin naming the server the request was sent
// to (scheme http, the request's Host): the page's own origin.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Values("Origin")
	return len(o) == 1 && strings.EqualFold(o[0], "http://"+r.Host)
}

// fetchedByPage reports whether the browser says r comes from the page's own origin or
// from the user (Sec-Fetch-Site same-origin or none), or says nothing (older browsers,
// which the Origin rules cover). A GET that a page on another port of the loopback makes
// the browser send (an image, a link), cookie included, says same-site and is refused:
// cookies do not isolate ports, and a stream such as mcpManager/login acts.
func fetchedByPage(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return true
	}
	return false
}

// cookieAuthorized reports whether r carries the session cookie of this server.
func (h *handler) cookieAuthorized(r *http.Request) bool {
	c, err := r.Cookie(sessionCookieName(r.Host))
	if err != nil {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(c.Value), []byte(h.session)) == 1
}

// page serves the management page's files (no token needed: they hold no data) and the
// session exchange. It reports whether it answered r.
func (h *handler) page(w http.ResponseWriter, r *http.Request) bool {
	if r.URL.Path == SessionPath {
		h.exchange(w, r)
		return true
	}
	name := strings.TrimPrefix(r.URL.Path, "/")
	if name == "" {
		name = "index.html"
	}
	if !slices.Contains(web.Files, name) {
		return false
	}
	if !allow(w, r, http.MethodGet, http.MethodHead) {
		return true
	}
	b, err := fs.ReadFile(web.FS(), name)
	if err != nil {
		writeError(w, http.StatusInternalServerError, &Error{Code: CodeInternal, Message: "page file missing"})
		return true
	}
	hdr := w.Header()
	ct := mime.TypeByExtension(path.Ext(name))
	if ct == "" {
		ct = "application/octet-stream"
	}
	hdr.Set("Content-Type", ct)
	hdr.Set("Content-Security-Policy", pageCSP(h.sandboxOrigin(r.Host)))
	hdr.Set("X-Frame-Options", "DENY")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("Cross-Origin-Opener-Policy", "same-origin")
	hdr.Set("Cross-Origin-Resource-Policy", "same-origin")
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(b))
	return true
}

// exchange answers POST /v1/session: a request from the page's own origin carrying the
// bearer token gets the HttpOnly, SameSite=Strict session cookie.
func (h *handler) exchange(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodPost) {
		return
	}
	if !sameOrigin(r) {
		writeError(w, http.StatusForbidden, &Error{Code: CodeForbiddenOrigin, Message: "the session is only given to the page's own origin"})
		return
	}
	if !h.guard.Authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="harness"`)
		writeError(w, http.StatusUnauthorized, &Error{Code: CodeUnauthorized, Message: "missing or wrong bearer token (open the URL that harness run printed)"})
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name:     sessionCookieName(r.Host),
		Value:    h.session,
		Path:     "/",
		HttpOnly: true,
		SameSite: http.SameSiteStrictMode,
	})
	writeJSON(w, http.StatusOK, struct {
		OK bool `json:"ok"`
	}{true})
}
