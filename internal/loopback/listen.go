package loopback

import (
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Listen listens on addr (host:port). "localhost" is 127.0.0.1, so the listener never
// depends on the resolver; an IPv4 address listens on tcp4 (0.0.0.0 means IPv4's
// interfaces, as written), an IPv6 one on tcp6, an empty host on every interface.
func Listen(addr string) (net.Listener, error) {
	network := "tcp"
	if host, port, err := net.SplitHostPort(addr); err == nil {
		if strings.EqualFold(host, "localhost") {
			addr = net.JoinHostPort("127.0.0.1", port)
			host = "127.0.0.1"
		}
		if ip, err := netip.ParseAddr(host); err == nil {
			network = "tcp4"
			if ip.Is6() && !ip.Is4In6() {
				network = "tcp6"
			}
		}
	}
	return net.Listen(network, addr)
}

// IsLoopback reports whether addr (host:port, or a host) names the loopback: "localhost" or
// a loopback IP address. An empty host (every interface) is not the loopback.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	return host != "" && LoopbackHost(host)
}

// DialAddr is the address local clients dial for a listener ln opened on addr: ln's own,
// or for a listener on every interface (0.0.0.0, ::, or no host) the loopback of addr's
// family (127.0.0.1 unless addr's host is an IPv6 address), which a [Guard] accepts.
func DialAddr(addr string, ln net.Addr) string {
	a, ok := ln.(*net.TCPAddr)
	if !ok || !a.IP.IsUnspecified() {
		return ln.String()
	}
	ip := "127.0.0.1"
	if host, _, err := net.SplitHostPort(addr); err == nil {
		if p, err := netip.ParseAddr(host); err == nil && p.Is6() && !p.Is4In6() {
			ip = "::1"
		}
	}
	return net.JoinHostPort(ip, strconv.Itoa(a.Port))
}

// FreePort returns a port of 127.0.0.1 that was free a moment ago, for a child process that
// must be told its port before it listens (a server given --addr or PORT). Another process
// may take the port in between: a caller that listens itself passes port 0 instead.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
