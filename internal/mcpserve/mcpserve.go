// Package mcpserve serves one *mcp.Server the way the harness's embedded servers (the demo
// server, the workspace server) are served: one session over stdio or any pair of streams,
// or Streamable HTTP on a listener behind the loopback guard (Host and Origin checks, and a
// bearer token unless told otherwise), announced on a line of its own and shut down cleanly
// when the context ends.
//
// # Concurrency
//
// The functions may be called concurrently; each serves until its context is done or its
// client goes away. [HTTPOptions] is a plain value.
package mcpserve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/internal/loopback"
	"github.com/cordisgo/harness/internal/procpolicy"
)

// shutdownTimeout bounds how long ServeHTTP waits for open requests to end before closing
// their connections.
const shutdownTimeout = 5 * time.Second

// Transport runs one session of s over t until the client ends it (EOF), the session fails
// or cx is done. It returns nil when the client went away or cx is done, and the session's
// error otherwise.
func Transport(cx context.Context, s *mcp.Server, t mcp.Transport) error {
	err := s.Run(cx, t)
	switch {
	case err == nil, errors.Is(err, io.EOF):
		return nil
	case cx.Err() != nil:
		return nil
	}
	return err
}

// IO is [Transport] over newline-delimited JSON-RPC read from r and written to w. Closing
// the session closes neither stream.
func IO(cx context.Context, s *mcp.Server, r io.Reader, w io.Writer) error {
	return Transport(cx, s, &mcp.IOTransport{Reader: io.NopCloser(r), Writer: nopWriteCloser{w}})
}

// Stdio is [IO] for a server process's command: over the process's own standard streams (r
// is os.Stdin, w os.Stdout) it serves as a stdio server does, with Go's default GOMAXPROCS
// (procpolicy.ForStdioServer: blocking reads of stdin would be slowed by the host's policy);
// over other streams as IO does.
func Stdio(cx context.Context, s *mcp.Server, r io.Reader, w io.Writer) error {
	if r == io.Reader(os.Stdin) && w == io.Writer(os.Stdout) {
		procpolicy.ForStdioServer()
		return Transport(cx, s, &mcp.StdioTransport{})
	}
	return IO(cx, s, r, w)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// Handler returns the Streamable HTTP handler of s: every session is served by s, and
// requests are answered at any path. It checks nothing; [ServeHTTP] puts the guard in
// front of it.
func Handler(s *mcp.Server, log *slog.Logger) *mcp.StreamableHTTPHandler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Logger: log})
}

// HTTPOptions configures [ServeHTTP]. The zero value answers loopback Hosts and Origins
// only and, having no token, refuses every request unless NoAuth is set.
type HTTPOptions struct {
	// What names the server in log records and errors ("demo server").
	What string
	// Guard is the loopback guard's configuration: the Addr whose host is accepted, further
	// Hosts and Origins, and the bearer Token.
	Guard loopback.Options
	// NoAuth serves without a bearer token (the Host and Origin checks stay).
	NoAuth bool
	// Logger receives the server's records; nil discards them.
	Logger *slog.Logger
	// OnShutdown, when set, runs once the listener is closed and again after the HTTP
	// server stopped (it must be idempotent): a server ends its running calls there so
	// that closing the sessions, which waits for them, is prompt.
	OnShutdown func()
}

// ServeHTTP serves s's [Handler] at /mcp on ln (which it closes) until cx is done, then
// closes every session and shuts the HTTP server down. Every request passes the guard
// first: a Host or Origin it does not accept is 403, a missing or wrong bearer token 401
// (unless NoAuth). Once listening it writes the URL (http://host:port/mcp) on a line of its
// own to announce. It returns nil after a clean shutdown and an error if it cannot serve or
// shut down within a few seconds.
func ServeHTTP(cx context.Context, ln net.Listener, s *mcp.Server, opts HTTPOptions, announce io.Writer) error {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	what := opts.What
	if what == "" {
		what = "mcp server"
	}
	guard := loopback.New(opts.Guard)
	mcpHandler := Handler(s, log)
	mux := http.NewServeMux()
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := guard.Check(r); err != nil {
			http.Error(w, "forbidden: "+err.Error(), loopback.Status(err))
			return
		}
		if !opts.NoAuth && !guard.Authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="harness"`)
			http.Error(w, "unauthorized: a bearer token is required", http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	hs := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	// Shutdown closes the listeners and then runs this hook, so no session created
	// afterwards is missed except by requests already being read; the second pass below
	// catches those.
	stop := func() {
		if opts.OnShutdown != nil {
			opts.OnShutdown()
		}
		closeSessions(s)
	}
	hs.RegisterOnShutdown(stop)

	url := "http://" + ln.Addr().String() + "/mcp"
	log.Info(what+" listening", slog.String("url", url))
	if _, err := fmt.Fprintln(announce, url); err != nil {
		_ = ln.Close()
		return fmt.Errorf("%s: announcing %s: %w", what, url, err)
	}

	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		stop()
		return fmt.Errorf("%s: serving HTTP on %s: %w", what, ln.Addr(), err)
	case <-cx.Done():
	}

	scx, cancel := context.WithTimeout(context.WithoutCancel(cx), shutdownTimeout)
	defer cancel()
	err := hs.Shutdown(scx)
	if err != nil {
		log.Warn(what+": graceful shutdown timed out, closing connections", slog.String("url", url), slog.Any("err", err))
		err = hs.Close()
	}
	stop()
	if serr := <-served; err == nil && !errors.Is(serr, http.ErrServerClosed) {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("%s: shutting down %s: %w", what, url, err)
	}
	log.Info(what+" stopped", slog.String("url", url))
	return nil
}

// closeSessions closes every session of s; each Close waits for the session's in-flight
// requests.
func closeSessions(s *mcp.Server) {
	for ss := range s.Sessions() {
		_ = ss.Close() // best effort: the session is gone either way
	}
}

// ListenAddr applies the loopback default to a listening address: an empty addr is
// 127.0.0.1 on a free port, an empty host 127.0.0.1 (not every interface: "0.0.0.0:8080"
// listens on all of them, as written).
func ListenAddr(addr string) string {
	if addr == "" {
		return "127.0.0.1:0"
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr // Listen reports the malformed address
	}
	if host == "" {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return addr
}

// Listen listens on [ListenAddr](addr); the error names what is listening and where.
func Listen(cx context.Context, what, addr string) (net.Listener, error) {
	addr = ListenAddr(addr)
	var lc net.ListenConfig
	ln, err := lc.Listen(cx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: listening on %s: %w", what, addr, err)
	}
	return ln, nil
}
