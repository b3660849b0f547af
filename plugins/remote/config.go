package remote

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/userdirs"
)

// Defaults applied by [Config.Default].
const (
	// DefaultAddr lets the kernel pick a free port on the IPv4 loopback, so two hosts on
	// one machine never collide; clients find the port in the endpoint file.
	DefaultAddr = "127.0.0.1:0"
	// DefaultMaxBodyBytes bounds a request body (the JSON parameters): remote methods take
	// names and options, not documents, so 4 MiB is generous while keeping one request from
	// holding the host's memory.
	DefaultMaxBodyBytes = 4 << 20
)

// Config configures the remote plugin.
type Config struct {
	// Addr is the TCP address to listen on. It must be a loopback address — an IP literal
	// in 127.0.0.0/8, ::1, or "localhost" (which means 127.0.0.1) — unless AllowRemote is
	// set. Port 0 picks a free port.
	Addr string `json:"addr"`
	// AllowRemote permits an Addr beyond the loopback: an interface's IP literal, or
	// 0.0.0.0 / [::] for every interface (never a host name: the listener must not depend
	// on the resolver). Requests may then name the host by any IP literal or by one of
	// AllowedHosts, and the page may be used from its own origin on that address. Nothing
	// is encrypted: the token and the session cookie cross the network in clear, so use it
	// on a trusted network only (docs/web.md); an SSH tunnel to a loopback host is safer.
	AllowRemote bool `json:"allowRemote"`
	// AllowedHosts are host names (no port, such as "devbox.lan") a request's Host header
	// may carry besides the loopback and IP literals, with AllowRemote. Any other name is
	// refused (DNS rebinding).
	AllowedHosts []string `json:"allowedHosts"`
	// TokenFile is where the bearer token is written (mode 0600; its directory is created
	// with mode 0700). Empty means [DefaultTokenFile]. It must be an absolute path.
	TokenFile string `json:"tokenFile"`
	// EndpointFile is where the endpoint (URL, process id, token file) is written for
	// clients to discover the host. Empty means [EndpointFileFor] of the token file. It must
	// be an absolute path.
	EndpointFile string `json:"endpointFile"`
	// MaxBodyBytes bounds a request body; a larger one is refused with code "too_large".
	MaxBodyBytes int64 `json:"maxBodyBytes"`
}

// Default sets the defaults: [DefaultAddr] and [DefaultMaxBodyBytes]; the files default
// to their standard locations when left empty.
func (c *Config) Default() {
	c.Addr = DefaultAddr
	c.MaxBodyBytes = DefaultMaxBodyBytes
}

// Interface guards: the plugin's configuration has defaults and validates itself.
var (
	_ ctx.Defaulter = (*Config)(nil)
	_ ctx.Validator = Config{}
)

// Validate checks the configuration. Every problem is a [*ctx.ConfigError] naming its key.
func (c Config) Validate() error {
	var p ctx.Problems
	if _, err := listenAddr(c.Addr, c.AllowRemote); err != nil {
		p.Add("addr", "got %q: %v", c.Addr, err)
	}
	for i, h := range c.AllowedHosts {
		if !c.AllowRemote {
			p.Add("allowedHosts", "needs allowRemote: true (the listener is loopback only without it)")
			break
		}
		if !hostName(h) {
			p.Add(fmt.Sprintf("allowedHosts[%d]", i), "got %q: want a host name without a port, such as devbox.lan", h)
		}
	}
	if c.TokenFile != "" && !filepath.IsAbs(c.TokenFile) {
		p.Add("tokenFile", "must be an absolute path, got %q", c.TokenFile)
	}
	if c.EndpointFile != "" && !filepath.IsAbs(c.EndpointFile) {
		p.Add("endpointFile", "must be an absolute path, got %q", c.EndpointFile)
	}
	if c.TokenFile != "" && c.EndpointFile != "" && filepath.Clean(c.TokenFile) == filepath.Clean(c.EndpointFile) {
		p.Add("endpointFile", "must differ from tokenFile, got %q", c.EndpointFile)
	}
	if c.MaxBodyBytes <= 0 {
		p.Add("maxBodyBytes", "must be a positive number of bytes, got %d", c.MaxBodyBytes)
	}
	return p.Err()
}

// files returns the token and endpoint file paths, defaults applied.
func (c Config) files() (token, endpoint string, err error) {
	token = c.TokenFile
	if token == "" {
		if token, err = DefaultTokenFile(); err != nil {
			return "", "", err
		}
	}
	endpoint = c.EndpointFile
	if endpoint == "" {
		endpoint = EndpointFileFor(token)
	}
	return token, endpoint, nil
}

// DefaultTokenFile returns the default token file: remote.token in the "harness"
// directory of the user's configuration directory in the process's environment
// (userdirs.Env.Config: on Linux $XDG_CONFIG_HOME/harness/remote.token or
// ~/.config/harness/remote.token), where the CLI looks for the endpoint file beside it.
func DefaultTokenFile() (string, error) {
	dir, err := userdirs.Env{}.Config()
	if err != nil {
		return "", fmt.Errorf("no default location for tokenFile (set it explicitly): %w", err)
	}
	return filepath.Join(dir, "harness", "remote.token"), nil
}

// DefaultEndpointFile returns the endpoint file a host with the default configuration
// writes: [EndpointFileFor] of [DefaultTokenFile]. The CLI reads it to find a running host.
func DefaultEndpointFile() (string, error) {
	tok, err := DefaultTokenFile()
	if err != nil {
		return "", err
	}
	return EndpointFileFor(tok), nil
}

// EndpointFileFor returns the endpoint file that goes with a token file: the same path
// with a ".token" extension replaced by (or, without it, extended with) ".endpoint.json".
func EndpointFileFor(tokenFile string) string {
	return strings.TrimSuffix(tokenFile, ".token") + ".endpoint.json"
}

var (
	errNotLoopback = errors.New("not a loopback address: the remote API listens on loopback only unless allowRemote is true (use 127.0.0.1, [::1] or localhost with a port)")
	errNotIP       = errors.New("want an IP address and a port, such as 192.168.1.10:7100 or 0.0.0.0:7100 (with allowRemote the host must be an IP literal or localhost, not a name)")
)

// listenAddr checks that addr is host:port with a loopback host (any IP literal with
// allowRemote) and returns the address to listen on ("localhost" becomes 127.0.0.1, so
// the listener never depends on the resolver).
func listenAddr(addr string, allowRemote bool) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", errNotLoopback
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || strconv.FormatUint(n, 10) != port {
		return "", fmt.Errorf("port %q: must be a number from 0 to 65535", port)
	}
	if strings.EqualFold(host, "localhost") {
		return net.JoinHostPort("127.0.0.1", port), nil
	}
	ip, err := netip.ParseAddr(host)
	switch {
	case err == nil && ip.Zone() == "" && ip.Unmap().IsLoopback():
	case !allowRemote:
		return "", errNotLoopback
	case err != nil || ip.Zone() != "":
		return "", errNotIP
	}
	return net.JoinHostPort(ip.Unmap().String(), port), nil
}

// hostName reports whether h is a DNS host name without a port: letters, digits, '-' and
// dots, labels of 1 to 63 bytes.
func hostName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	if _, err := netip.ParseAddr(h); err == nil {
		return false // an IP literal is always accepted; it is not a name
	}
	for label := range strings.SplitSeq(strings.TrimSuffix(h, "."), ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

// withPort returns addr (host:port, as listenAddr returns it) with another port.
func withPort(addr, port string) (string, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	return net.JoinHostPort(host, port), nil
}
