package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/loopback"
)

// Key names the service the plugin provides while it serves: the running [Server].
var Key = ctx.NewKey[*Server]("remote")

// Plugin serves every method exposed in its tree with [ctx.Context.ExposeRemote] over
// HTTP on loopback. Mount it once per tree; its configuration is [Config].
var Plugin = ctx.Define(ctx.Meta{Name: "remote"}, apply)

// Server describes a running remote API endpoint. Each load of the plugin makes a new
// Server with a new port (unless fixed) and a new token.
//
// A Server is immutable and safe for concurrent use.
type Server struct {
	addr         string // what local clients dial
	listen       string // the listener's address
	token        string
	tokenFile    string
	endpointFile string
	sandboxPort  string // the apps' sandbox listener's port (sandbox.go)
}

// Addr returns the address local clients dial, such as "127.0.0.1:43117": the listener's
// address, or for a wildcard listener (0.0.0.0, [::]; allowRemote) the loopback with its
// port.
func (s *Server) Addr() string { return s.addr }

// ListenAddr returns the listener's address, such as "0.0.0.0:43117" (the same as Addr
// unless the listener is a wildcard).
func (s *Server) ListenAddr() string { return s.listen }

// URL returns the base URL of the API, such as "http://127.0.0.1:43117".
func (s *Server) URL() string { return "http://" + s.addr }

// SandboxURL returns the URL of the apps' sandbox proxy (sandbox.go) on the loopback, such
// as "http://127.0.0.1:43118/sandbox.html": the same host as [Server.URL], another port.
func (s *Server) SandboxURL() string {
	host, _, _ := net.SplitHostPort(s.addr)
	return "http://" + net.JoinHostPort(host, s.sandboxPort) + SandboxPath
}

// TokenFile returns the path of the file holding the bearer token.
func (s *Server) TokenFile() string { return s.tokenFile }

// EndpointFile returns the path of the endpoint file (see [ReadEndpoint]).
func (s *Server) EndpointFile() string { return s.endpointFile }

// Token returns the bearer token, for in-process clients. Never log it.
func (s *Server) Token() string { return s.token }

// String describes the server without its token.
func (s *Server) String() string { return "remote API at " + s.URL() }

// Endpoint is the content of the endpoint file.
type Endpoint struct {
	// URL is the base URL of the API.
	URL string `json:"url"`
	// PID is the process id of the host.
	PID int `json:"pid"`
	// TokenFile is the path of the token file.
	TokenFile string `json:"tokenFile"`
}

// readHeaderTimeout bounds how long a connection may take to send its request headers,
// so idle half-open connections do not pile up. Streams are not affected.
const readHeaderTimeout = 10 * time.Second

func apply(c *ctx.Context, cfg Config) error {
	listenAddr, err := listenAddr(cfg.Addr, cfg.AllowRemote)
	if err != nil {
		return fmt.Errorf("addr %q: %w", cfg.Addr, err)
	}
	tokenFile, endpointFile, err := cfg.files()
	if err != nil {
		return err
	}
	// One host per file: a second host on the same files would take the first one's
	// clients away (and remove its files when it stops). A file left by a host that is
	// gone is replaced.
	if ep, live := loopback.Held(endpointFile); live {
		return &EndpointInUseError{File: endpointFile, PID: ep.PID, URL: ep.URL}
	} else if ep.PID > 0 {
		c.Logger().Info("replacing a stale endpoint file: its host is not running", "endpoint_file", endpointFile, "pid", ep.PID)
	}
	token := loopback.NewToken()

	ln, err := listen(c, "listener", listenAddr)
	if err != nil {
		return fmt.Errorf("remote API: %w", err)
	}
	// The apps' sandbox: a second listener on the same address, a port of its own (another
	// origin for the browser), serving the sandbox proxy (sandbox.go).
	sandboxAddr, err := withPort(listenAddr, "0")
	if err != nil {
		return err
	}
	sln, err := listen(c, "sandbox-listener", sandboxAddr)
	if err != nil {
		return fmt.Errorf("remote API: the apps' sandbox: %w", err)
	}
	_, pagePort, _ := net.SplitHostPort(ln.Addr().String())
	_, sandboxPort, _ := net.SplitHostPort(sln.Addr().String())
	srv := &Server{addr: loopback.DialAddr(listenAddr, ln.Addr()), listen: ln.Addr().String(), token: token, tokenFile: tokenFile,
		endpointFile: endpointFile, sandboxPort: sandboxPort}
	h := &handler{ctx: c, session: sessionValue([]byte(token)), maxBody: cfg.MaxBodyBytes, log: c.Logger(), remote: cfg.AllowRemote,
		sandboxPort: sandboxPort}
	hosts := []string(nil)
	if cfg.AllowRemote {
		hosts = cfg.AllowedHosts
	}
	// Origins: the loopback's only; the page's own origin beyond it is handler's rule.
	h.guard = loopback.New(loopback.Options{Addr: listenAddr, Hosts: hosts, AnyIP: cfg.AllowRemote, Token: token})
	if _, err := c.Go("http-server", func(runcx context.Context) error { return h.serve(runcx, ln) }); err != nil {
		return err
	}
	sb := &sandbox{guard: loopback.New(loopback.Options{Addr: listenAddr, Hosts: hosts, AnyIP: cfg.AllowRemote}), pagePort: pagePort}
	if _, err := c.Go("sandbox-server", func(runcx context.Context) error { return serveHTTP(runcx, sln, sb, c.Logger(), nil) }); err != nil {
		return err
	}

	if err := loopback.WriteFile(tokenFile, []byte(token+"\n")); err != nil {
		return fmt.Errorf("remote API: tokenFile: %w", err)
	}
	if _, err := c.Defer("token-file", func(context.Context) error {
		return loopback.RemoveFile(tokenFile, []byte(token+"\n"))
	}); err != nil {
		return err // Defer removed the file already
	}
	ep, err := json.Marshal(Endpoint{URL: srv.URL(), PID: os.Getpid(), TokenFile: tokenFile})
	if err != nil {
		return err
	}
	ep = append(ep, '\n')
	if err := loopback.WriteFile(endpointFile, ep); err != nil {
		return fmt.Errorf("remote API: endpointFile: %w", err)
	}
	if _, err := c.Defer("endpoint-file", func(context.Context) error {
		return loopback.RemoveFile(endpointFile, ep)
	}); err != nil {
		return err // Defer removed the file already
	}

	if _, err := Key.Provide(c, srv); err != nil {
		return err
	}
	c.Logger().Info("remote API listening", "url", srv.URL(), "token_file", tokenFile, "endpoint_file", endpointFile)
	if ip, err := netip.ParseAddrPort(srv.listen); err == nil && !ip.Addr().Unmap().IsLoopback() {
		c.Logger().Warn("remote API listening beyond the loopback (allowRemote): the token and the page's session cross the network unencrypted; use a trusted network only",
			"addr", srv.listen)
	}
	return nil
}

// serve runs the HTTP server on ln until run is cancelled, then closes every connection
// and waits for the handlers still running (their request contexts derive from run, so
// the methods they call see the cancellation).
// listen listens on addr (loopback.Listen) until c's scope ends, when the listener, named
// name among the scope's deferred closes, is closed.
func listen(c *ctx.Context, name, addr string) (net.Listener, error) {
	ln, err := loopback.Listen(addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	if _, err := c.Defer(name, func(context.Context) error {
		if err := ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			return err
		}
		return nil
	}); err != nil {
		return nil, err // Defer closed ln already
	}
	return ln, nil
}

func (h *handler) serve(runcx context.Context, ln net.Listener) error {
	return serveHTTP(runcx, ln, h, h.log, h.inflight.closeAndWait)
}

// serveHTTP serves handler on ln until run is cancelled, then closes every connection,
// calls drain (which waits for the handlers still running) and waits for every
// connection's goroutine.
func serveHTTP(runcx context.Context, ln net.Listener, handler http.Handler, log *slog.Logger, drain func()) error {
	// conns tracks every connection's goroutine until it is closed: net/http may linger on
	// a connection after Close (it pauses before closing one whose request body went
	// unread), and an unload must leave no goroutine behind.
	var conns sync.WaitGroup
	hs := &http.Server{
		Handler:     handler,
		BaseContext: func(net.Listener) context.Context { return runcx },
		ConnState: func(_ net.Conn, st http.ConnState) {
			switch st {
			case http.StateNew:
				conns.Add(1)
			case http.StateClosed, http.StateHijacked:
				conns.Done()
			}
		},
		ReadHeaderTimeout:            readHeaderTimeout,
		DisableGeneralOptionsHandler: true,
		ErrorLog:                     slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	stop := context.AfterFunc(runcx, func() { _ = hs.Close() })
	defer stop()
	err := hs.Serve(ln)
	_ = hs.Close()
	if drain != nil {
		drain()
	}
	conns.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// tracker counts running handlers and lets the server wait for them once it stops
// admitting new ones.
type tracker struct {
	mu     sync.Mutex
	n      int
	closed bool
	zero   chan struct{} // made by closeAndWait; closed when n reaches 0
}

// enter admits a handler; it reports false once the server is stopping.
func (t *tracker) enter() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.n++
	return true
}

func (t *tracker) leave() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n--
	if t.n == 0 && t.zero != nil {
		close(t.zero)
		t.zero = nil
	}
}

// closeAndWait stops admitting handlers and waits for the running ones to return.
func (t *tracker) closeAndWait() {
	t.mu.Lock()
	t.closed = true
	if t.n == 0 {
		t.mu.Unlock()
		return
	}
	zero := make(chan struct{})
	t.zero = zero
	t.mu.Unlock()
	<-zero
}
