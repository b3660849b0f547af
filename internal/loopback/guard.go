package loopback

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
)

// The refusals of [Guard.Check]; [Status] gives each one's HTTP status.
var (
	// ErrHost is a Host header that names neither the loopback nor an accepted host: DNS
	// rebinding, or a client that reached the server by a name it was not told.
	ErrHost = errors.New("loopback: Host header not allowed")
	// ErrOrigin is an Origin header of a page the server does not serve (or several).
	ErrOrigin = errors.New("loopback: Origin not allowed")
	// ErrToken is a request without the bearer token, or with another one.
	ErrToken = errors.New("loopback: missing or wrong bearer token")
)

// Options configures a [Guard]. The zero value accepts loopback Hosts and Origins only and
// authorizes no token.
type Options struct {
	// Addr is the listening address (host:port). Its host, unless empty or unspecified
	// (0.0.0.0, ::), is accepted in Host headers.
	Addr string
	// Hosts are further names accepted in Host headers (host or host:port; case-insensitive,
	// a trailing dot ignored).
	Hosts []string
	// AnyIP accepts a Host header naming any IP address: an address cannot be rebound
	// through DNS.
	AnyIP bool
	// Origins are further Origin values accepted (scheme://host[:port]; case-insensitive, a
	// trailing slash ignored).
	Origins []string
	// HostOrigins accepts an Origin whose host is one accepted by name (Addr's host, Hosts);
	// without it only loopback origins and Origins are.
	HostOrigins bool
	// Token is the bearer token; empty authorizes nothing.
	Token string
}

// Guard checks the requests of a local HTTP server before anything else reads them: the
// Host header, the Origin header and the bearer token. It is immutable and safe for
// concurrent use.
type Guard struct {
	names       map[string]bool // accepted by name, normalized (see hostName)
	anyIP       bool
	hostOrigins bool
	origins     []string
	token       []byte
}

// New makes the guard that opts describe.
func New(opts Options) *Guard {
	g := &Guard{names: map[string]bool{}, anyIP: opts.AnyIP, hostOrigins: opts.HostOrigins, token: []byte(opts.Token)}
	if host, _, err := net.SplitHostPort(opts.Addr); err == nil && host != "" {
		if ip, err := netip.ParseAddr(host); err != nil || !ip.IsUnspecified() {
			g.names[hostName(host)] = true
		}
	}
	for _, h := range opts.Hosts {
		if n := hostName(h); n != "" {
			g.names[n] = true
		}
	}
	for _, o := range opts.Origins {
		g.origins = append(g.origins, strings.TrimSuffix(o, "/"))
	}
	return g
}

// Check refuses r, with an error wrapping [ErrHost] or [ErrOrigin], when its Host or its
// Origin (a request without one is not a browser's) is not accepted. The token is
// [Guard.Authorized]'s.
func (g *Guard) Check(r *http.Request) error {
	if !g.Host(r.Host) {
		return ErrHost
	}
	if o, ok := r.Header["Origin"]; ok && (len(o) != 1 || !g.Origin(o[0])) {
		return ErrOrigin
	}
	return nil
}

// Host reports whether a Host header value (host or host:port) is accepted: the loopback
// ("localhost" or a loopback address), an accepted name, or with AnyIP any IP address.
func (g *Guard) Host(host string) bool {
	h := hostName(host)
	if h == "" {
		return false
	}
	return LoopbackHost(h) || g.names[h] || g.anyIP && ipLiteral(h)
}

// Origin reports whether an Origin header value is accepted: one of Options.Origins, or
// http(s)://host[:port] (nothing else: no user, path or query) whose host is the loopback or,
// with HostOrigins, a name the guard accepts in Host.
func (g *Guard) Origin(origin string) bool {
	for _, o := range g.origins {
		if strings.EqualFold(o, origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || u.Opaque != "" ||
		u.Path != "" || u.RawQuery != "" || u.Fragment != "" {
		return false
	}
	h := hostName(u.Hostname())
	return LoopbackHost(h) || g.hostOrigins && g.names[h]
}

// Authorized reports whether r carries the guard's bearer token.
func (g *Guard) Authorized(r *http.Request) bool { return g.Bearer(r.Header.Get("Authorization")) }

// Bearer reports whether an Authorization header value carries the guard's token in the
// Bearer scheme, whose name is case-insensitive (RFC 9110 §11.1): "bearer", "BEARER" and
// "Bearer" alike. The token is compared in constant time.
func (g *Guard) Bearer(authorization string) bool {
	scheme, cred, ok := strings.Cut(strings.TrimSpace(authorization), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || len(g.token) == 0 {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(cred)), g.token) == 1
}

// Status is the HTTP status of a refusal: 403 for [ErrHost] and [ErrOrigin], 401 for
// [ErrToken], 500 for another error; 200 for none.
func Status(err error) int {
	switch {
	case err == nil:
		return http.StatusOK
	case errors.Is(err, ErrHost), errors.Is(err, ErrOrigin):
		return http.StatusForbidden
	case errors.Is(err, ErrToken):
		return http.StatusUnauthorized
	}
	return http.StatusInternalServerError
}

// LoopbackHost reports whether host (no port; IPv6 with or without brackets) names the
// loopback: "localhost" or a loopback IP address without a zone.
func LoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	return err == nil && ip.Zone() == "" && ip.Unmap().IsLoopback()
}

// ipLiteral reports whether host (no port) is an IP address without a zone.
func ipLiteral(host string) bool {
	ip, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	return err == nil && ip.Zone() == ""
}

// hostName is a Host value's host: without its port and IPv6 brackets, in lower case,
// without a trailing dot.
func hostName(hostport string) string {
	h := hostport
	if hh, _, err := net.SplitHostPort(hostport); err == nil {
		h = hh
	}
	return strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
}

// NewToken returns a new bearer token: 32 random bytes, hex-encoded.
func NewToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// ReadToken reads a bearer token from the file at path (a server's --token-file): its
// content without the surrounding white space. An empty file is an error.
func ReadToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("%s: empty", path)
	}
	return tok, nil
}
