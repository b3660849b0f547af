package hostgateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"time"

	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/gateway/audit"
	"github.com/cordisgo/harness/gateway/redisstore"
	"github.com/cordisgo/harness/internal/loopback"
)

// EndpointFileName is the gateway's endpoint file in the harness's configuration directory,
// next to the remote API's.
const EndpointFileName = "gateway.json"

// Config is what a command line says of a gateway (harness serve, run --gateway), as
// values: [Config.Options] checks it and makes the options of [Serve]. It is a plain value.
type Config struct {
	// Addr is where the gateway listens (HOST:PORT; port 0: a free port).
	Addr string
	// NoAuth serves without a bearer token (refused unless Addr is loopback, and with Access).
	NoAuth bool
	// AllowedHosts and AllowedOrigins are further Host headers and browser origins the
	// gateway accepts.
	AllowedHosts, AllowedOrigins []string
	// SessionIdleTimeout closes a downstream session idle that long; 0: never.
	SessionIdleTimeout time.Duration
	// Stateless serves the stateless protocol revision to the clients that ask for it.
	Stateless bool
	// EndpointFile is where the gateway's URL and token are written; "": EndpointFileName
	// in Token.Dir.
	EndpointFile string
	// Token says where the bearer token comes from ([Token]); Token.Dir is the harness's
	// configuration directory.
	Token TokenOptions
	// Store, StorePrefix, Replica, DrainTimeout, Access, AuditFile and ShutdownTimeout are
	// those of [Options].
	Store, StorePrefix, Replica string
	DrainTimeout                time.Duration
	Access, AuditFile           string
	ShutdownTimeout             time.Duration
}

// EndpointPath is c.EndpointFile, else EndpointFileName in the configuration directory.
func (c Config) EndpointPath() (string, error) {
	if c.EndpointFile != "" {
		return c.EndpointFile, nil
	}
	if c.Token.DirErr != nil {
		return "", fmt.Errorf("no place for the gateway's endpoint file: %w (give one with --endpoint-file)", c.Token.DirErr)
	}
	return filepath.Join(c.Token.Dir, EndpointFileName), nil
}

// tokenAndFile resolves the bearer token ([Token]) and the endpoint file; what is missing is
// an *OptionsError.
func (c Config) tokenAndFile() (token, endpointFile string, err error) {
	if token, err = Token(c.Token); err == nil {
		endpointFile, err = c.EndpointPath()
	}
	if err != nil {
		return "", "", &OptionsError{Err: err}
	}
	return token, endpointFile, nil
}

// Options checks c and returns the options of [Serve]: the token resolved ([Token]; none
// with NoAuth or Access), the endpoint file defaulted, the HTTP options checked. What it
// refuses is an *OptionsError (a usage error).
func (c Config) Options() (Options, error) {
	http := gateway.HTTPOptions{Addr: c.Addr, NoAuth: c.NoAuth, AllowedHosts: c.AllowedHosts, AllowedOrigins: c.AllowedOrigins,
		SessionIdleTimeout: c.SessionIdleTimeout, Stateless: c.Stateless}
	if c.SessionIdleTimeout == 0 {
		http.SessionIdleTimeout = -1 // 0 on the command line: never
	}
	tok, endpointFile, err := c.tokenAndFile()
	if err != nil {
		return Options{}, err
	}
	switch {
	case c.Access != "" && c.NoAuth:
		return Options{}, &OptionsError{Err: errors.New("--no-auth with --access: people sign in with the identity provider")}
	case !c.NoAuth && c.Access == "":
		http.Token = tok
	}
	if err := http.Check(); err != nil && c.Access == "" {
		return Options{}, &OptionsError{Err: err}
	}
	return Options{HTTP: http, EndpointFile: endpointFile, ShutdownTimeout: c.ShutdownTimeout,
		Store: c.Store, StorePrefix: c.StorePrefix, Replica: c.Replica, DrainTimeout: c.DrainTimeout,
		Access: c.Access, AuditFile: c.AuditFile}, nil
}

// Listen takes the gateway's address (loopback.Listen) before anything mounts, so that a
// busy port refuses at once; the error of an address in use names the running gateway that
// holds it ([Holder]).
func Listen(o Options) (net.Listener, error) {
	ln, err := loopback.Listen(o.HTTP.Addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w%s", o.HTTP.Addr, err, Holder(o.EndpointFile, o.HTTP.Addr))
	}
	return ln, nil
}

// PrintClient prints the configuration of client (a name of [ClientNames], or all) for the
// gateway running from c's endpoint file (its URL and token, as the file says), unless
// fixedAddr (Addr was given) or none runs: then for the gateway that c would serve. It
// returns the gateway it found running (zero: none). An unknown client is an
// *UnknownClientError; what c lacks, an *OptionsError.
func (c Config) PrintClient(w io.Writer, client string, fixedAddr bool) (Endpoint, error) {
	tok, endpointFile, err := c.tokenAndFile()
	if err != nil {
		return Endpoint{}, err
	}
	if c.NoAuth {
		tok = ""
	}
	running, ok := Running(endpointFile)
	if ok && !fixedAddr {
		return running, PrintClientConfig(w, client, running.URL, running.Token)
	}
	url, err := ClientURL(c.Addr)
	if err != nil {
		return Endpoint{}, &OptionsError{Err: err}
	}
	return Endpoint{}, PrintClientConfig(w, client, url, tok)
}

// AuditSource says where [ReadAudit] reads a gateway's audit trail: the Redis stream of a
// team's replicas (Store, StorePrefix, as serve was given them), else the JSON Lines file
// File (default: the one a gateway with an access file writes, DefaultAuditFile).
type AuditSource struct {
	Store, StorePrefix, File string
}

// ReadAudit reads the calls of the trail s names that q selects, oldest first.
func ReadAudit(cx context.Context, s AuditSource, q audit.Query) ([]audit.Entry, error) {
	if s.Store != "" {
		st, err := redisstore.Open(cx, redisstore.Options{URL: s.Store, Prefix: s.StorePrefix})
		if err != nil {
			return nil, err
		}
		defer func() { _ = st.Close() }()
		return st.Query(cx, q)
	}
	file := s.File
	if file == "" {
		var err error
		if file, err = DefaultAuditFile(); err != nil {
			return nil, err
		}
	}
	return audit.ReadFile(file, q)
}
