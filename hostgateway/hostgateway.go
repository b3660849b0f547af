// Package hostgateway serves a host's tree as an MCP gateway over HTTP (package gateway)
// the way harness serve and run --gateway do: on a listener taken before anything mounts,
// with the endpoint file other processes find it by (gateway.json, or a sibling when a
// running gateway holds it), the bearer token kept across restarts (gateway.token, mode
// 0600), and the configuration other agents paste to reach it.
//
// # Concurrency
//
// [Serve] starts the HTTP server's goroutine and returns the function that stops it and
// waits for it; everything else is a plain function.
package hostgateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/gateway/access"
	"github.com/cordisgo/harness/gateway/audit"
	"github.com/cordisgo/harness/gateway/redisstore"
	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/internal/loopback"
	"github.com/cordisgo/harness/internal/userdirs"
)

// OptionsError is the gateway's refusal of its HTTP options (a usage error).
type OptionsError struct{ Err error }

func (e *OptionsError) Error() string { return e.Err.Error() }
func (e *OptionsError) Unwrap() error { return e.Err }

// Endpoint is the content of the gateway's endpoint file.
type Endpoint struct {
	URL   string `json:"url"`
	Token string `json:"token,omitempty"`
	PID   int    `json:"pid"`
}

// Running returns what the endpoint file says of the gateway that serves from it, when it
// is running (loopback.Held: its process alive, its address accepting connections).
func Running(endpointFile string) (Endpoint, bool) {
	if _, ok := loopback.Held(endpointFile); !ok {
		return Endpoint{}, false
	}
	b, err := os.ReadFile(endpointFile)
	if err != nil {
		return Endpoint{}, false
	}
	var e Endpoint
	if json.Unmarshal(b, &e) != nil || e.URL == "" {
		return Endpoint{}, false
	}
	return e, true
}

// Holder names the gateway whose endpoint file says it listens on addr, for the
// error of an address in use ("" if none does).
func Holder(endpointFile, addr string) string {
	b, err := os.ReadFile(endpointFile)
	if err != nil {
		return ""
	}
	var e Endpoint
	if json.Unmarshal(b, &e) != nil || e.PID == 0 {
		return ""
	}
	_, port, _ := net.SplitHostPort(addr)
	if port == "" || !strings.Contains(e.URL, ":"+port+"/") {
		return ""
	}
	return fmt.Sprintf(" (the gateway of the host running as pid %d serves %s; stop it, or give this one another --addr)", e.PID, e.URL)
}

// Options configures [Serve].
type Options struct {
	// HTTP are the gateway's HTTP options (address, token, hosts, origins, idle timeout).
	HTTP gateway.HTTPOptions
	// EndpointFile is where the gateway's URL and token are written (mode 0600).
	EndpointFile string
	// ShutdownTimeout bounds the shutdown (after the drain).
	ShutdownTimeout time.Duration
	// Store is the URL of the Redis server the replicas of a team's gateway share
	// (redis://…, rediss://…, unix://…; empty: none, one process). See docs/gateway.md.
	Store string
	// StorePrefix starts the store's keys (default redisstore.DefaultPrefix).
	StorePrefix string
	// Replica names this replica (default: the host name and process id).
	Replica string
	// DrainTimeout bounds a replica's drain when it stops (with a Store; gateway.Drain): the
	// health check fails at once, and the requests that come until the load balancer has
	// stopped sending are served to their end before the sessions are left to the other
	// replicas. Requests still in flight when it runs out are answered with a JSON-RPC
	// error that says to retry them.
	DrainTimeout time.Duration
	// Access is the path of the access file (package gateway/access): people sign in with
	// the team's identity provider, and its rules say what each may see and call. Empty:
	// the shared bearer token (HTTP.Token), for one person.
	Access string
	// AuditFile is where the audit trail is appended without a Store (default, with Access:
	// gateway-audit.jsonl in the harness's state directory); with a Store, the trail is in
	// Redis. Empty without Access: no trail.
	AuditFile string
}

// DefaultAuditFile is the audit trail's file of a gateway with an access file and no store.
func DefaultAuditFile() (string, error) {
	dir, err := userdirs.Env{}.State()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "harness", "gateway-audit.jsonl"), nil
}

// URL is the gateway's aggregated endpoint on ln, listening at addr: what clients connect to.
func URL(addr string, ln net.Listener) string {
	return "http://" + loopback.DialAddr(addr, ln.Addr()) + gateway.PathAggregated
}

// Serve serves h's tree as a gateway on ln and writes the endpoint file; the function it
// returns shuts both down (a replica with a store drains first, within o.DrainTimeout),
// within o.ShutdownTimeout. Options the gateway refuses are an *OptionsError.
func Serve(cx context.Context, h *host.Host, ln net.Listener, o Options) (func(), error) {
	opts, endpointFile := o.HTTP, o.EndpointFile
	gwOpts := gateway.Options{Logger: h.Logger(), Agents: h.Agents, Replica: o.Replica, ShortNames: true}
	if o.Access != "" {
		pol, err := access.Load(o.Access, nil)
		if err != nil {
			return nil, &OptionsError{Err: err}
		}
		opts.Access = pol
	}
	var store *redisstore.Store
	if o.Store != "" {
		ocx, cancel := context.WithTimeout(cx, 10*time.Second)
		var err error
		store, err = redisstore.Open(ocx, redisstore.Options{URL: o.Store, Prefix: o.StorePrefix})
		cancel()
		if err != nil {
			return nil, fmt.Errorf("serve --store: %w", err)
		}
		gwOpts.Store, gwOpts.Audit, gwOpts.Vault = store, store, store
	}
	var auditFile *audit.File
	if store == nil && (o.AuditFile != "" || o.Access != "") {
		path := o.AuditFile
		if path == "" {
			var err error
			if path, err = DefaultAuditFile(); err != nil {
				return nil, err
			}
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("audit file: %w", err)
		}
		var err error
		if auditFile, err = audit.OpenFile(path); err != nil {
			return nil, err
		}
		gwOpts.Audit = auditFile
	}
	closeStore := func() {
		if store != nil {
			_ = store.Close()
		}
		if auditFile != nil {
			_ = auditFile.Close()
		}
	}
	gw, err := gateway.New(h.Root(), gwOpts)
	if err != nil {
		closeStore()
		return nil, err
	}
	handler, err := gw.Handler(opts)
	if err != nil {
		_ = gw.Close()
		closeStore()
		return nil, &OptionsError{Err: err}
	}
	// A listener on every interface is named by its loopback address, which the gateway's
	// Host check accepts.
	url := URL(opts.Addr, ln)
	if other, ok := loopback.Held(endpointFile); ok && other.URL != url {
		// Another gateway is serving from this file (its URL holds its port, so two gateways
		// in one process are told apart too): keep it, and write ours next to it.
		held := endpointFile
		endpointFile = SiblingFile(endpointFile, ln.Addr())
		h.Logger().Warn("the endpoint file belongs to another running gateway: writing this one's next to it",
			"endpoint_file", held, "other_pid", other.PID, "other_url", other.URL)
	}
	ours, err := json.MarshalIndent(Endpoint{URL: url, Token: opts.Token, PID: os.Getpid()}, "", "  ")
	if err == nil {
		ours = append(ours, '\n')
		err = loopback.WriteFile(endpointFile, ours)
	}
	if err != nil {
		_ = gw.Close()
		closeStore()
		return nil, fmt.Errorf("serve: endpoint file %s: %w", endpointFile, err)
	}
	// The page's Gateway sessions (gateway/sessions), beside the host's other remote methods.
	unexpose, err := gw.ExposeRemote(h.Root())
	if err != nil {
		h.Logger().Warn("the gateway's sessions are not shown on the page", "err", err)
		unexpose = func(context.Context) error { return nil }
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	h.Logger().Info("gateway listening", "url", url, "endpoint_file", endpointFile, "auth", !opts.NoAuth, "store", store != nil)
	return func() {
		if store != nil {
			// A replica: the balancer is told (the health check fails), the requests it still
			// sends are served until it has stopped, and then the sessions are left to the
			// other replicas (docs/gateway.md, "Rolling restarts").
			dcx, cancel := context.WithTimeout(context.WithoutCancel(cx), o.DrainTimeout)
			if err := gw.Drain(dcx); err != nil {
				h.Logger().Warn("the drain did not finish: requests still in flight are answered with an error that says to retry", "drain_timeout", o.DrainTimeout.String())
			}
			cancel()
			defer closeStore()
		}
		scx, cancel := context.WithTimeout(context.WithoutCancel(cx), o.ShutdownTimeout)
		defer cancel()
		_ = unexpose(scx)
		// Stop accepting first (a balancer's connection then fails, and it retries elsewhere),
		// then end the downstream sessions, whose streams would hold Shutdown.
		shut := make(chan error, 1)
		go func() { shut <- srv.Shutdown(scx) }()
		served := <-errc // Serve returns once Shutdown has closed the listener
		if err := gw.Close(); err != nil {
			h.Logger().Warn("closing the gateway", "err", err)
		}
		if err := <-shut; err != nil {
			_ = srv.Close()
		}
		if served != nil && !errors.Is(served, http.ErrServerClosed) {
			h.Logger().Error("gateway stopped", "err", served)
		}
		_ = loopback.RemoveFile(endpointFile, ours) // unless another gateway has written it since
	}, nil
}

// SiblingFile is the endpoint file of a gateway whose default one is held by
// another: gateway-<port>.json next to it.
func SiblingFile(path string, ln net.Addr) string {
	ext := filepath.Ext(path)
	port := "0"
	if a, ok := ln.(*net.TCPAddr); ok {
		port = strconv.Itoa(a.Port)
	}
	return strings.TrimSuffix(path, ext) + "-" + port + ext
}

// KeptToken reads the token kept in path, or writes a new one there (mode 0600,
// atomically) when the file does not exist or rotate is set. A kept file that others can
// read is refused: the token grants the whole fleet.
func KeptToken(path string, rotate bool) (string, error) {
	if !rotate {
		fi, err := os.Stat(path)
		switch {
		case err == nil && fi.Mode().Perm()&0o077 != 0:
			return "", fmt.Errorf("gateway token file %s has mode %04o: expected 0600 (chmod 600 it, or serve --rotate-token for a new one)", path, fi.Mode().Perm())
		case err == nil:
			b, err := os.ReadFile(path)
			if err != nil {
				return "", fmt.Errorf("gateway token file: %w", err)
			}
			if tok := strings.TrimSpace(string(b)); tok != "" {
				return tok, nil
			}
			// An empty file (a write cut short) gets a new token.
		case !errors.Is(err, fs.ErrNotExist):
			return "", fmt.Errorf("gateway token file: %w", err)
		}
	}
	tok := gateway.NewToken()
	if err := loopback.WriteFile(path, []byte(tok+"\n")); err != nil {
		return "", fmt.Errorf("gateway token file %s: %w", path, err)
	}
	return tok, nil
}

// TokenFileName is the file in the harness's configuration directory that keeps the
// gateway's bearer token across restarts (mode 0600), so that configured clients keep
// working.
const TokenFileName = "gateway.token"

// TokenOptions say where a gateway's bearer token comes from ([Token]). It is a plain
// value.
type TokenOptions struct {
	// File is a file that holds the token (serve --token-file); "" for none.
	File string
	// Env is $HARNESS_GATEWAY_TOKEN's value; "" for none.
	Env string
	// Dir is where the kept token is (TokenFileName in it); DirErr why there is none.
	Dir    string
	DirErr error
	// Rotate asks for a new kept token.
	Rotate bool
}

// Token returns the gateway's bearer token: File's, else Env, else the one kept in
// TokenFileName in Dir, made (mode 0600) when there is none yet or Rotate asks for a new
// one ([KeptToken]). Rotate with File or Env set is an error that says what to change
// instead.
func Token(o TokenOptions) (string, error) {
	switch {
	case o.File != "":
		if o.Rotate {
			return "", errors.New("--rotate-token: the token comes from --token-file; replace that file's content instead")
		}
		tok, err := loopback.ReadToken(o.File)
		if err != nil {
			return "", fmt.Errorf("--token-file: %w", err)
		}
		return tok, nil
	case o.Env != "":
		if o.Rotate {
			return "", errors.New("--rotate-token: the token comes from $HARNESS_GATEWAY_TOKEN; change the variable instead")
		}
		return o.Env, nil
	case o.DirErr != nil:
		return "", fmt.Errorf("no place to keep the gateway token: %w (give one with --token-file)", o.DirErr)
	}
	return KeptToken(filepath.Join(o.Dir, TokenFileName), o.Rotate)
}

// ClientURL is the aggregated route's URL a client is given for a gateway on addr (serve
// --addr): a fixed port, a wildcard host read as loopback. Port 0 has no URL to give.
func ClientURL(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "0" {
		return "", fmt.Errorf("--print-client-config needs the gateway's fixed address (--addr HOST:PORT, not port 0), got %q", addr)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + gateway.PathAggregated, nil
}
