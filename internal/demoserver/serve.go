package demoserver

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
)

// shutdownTimeout bounds how long ServeHTTP waits for open requests to end
// before closing their connections.
const shutdownTimeout = 5 * time.Second

// ServeStdio serves one session of a fresh server over stdin and stdout
// (newline-delimited JSON-RPC) until the client closes stdin, the session
// fails, or cx is done. Cancelling cx also ends running slow calls so that
// shutdown is prompt. It returns nil when the client closes stdin or cx is
// done, and the session's error otherwise.
//
// Nothing but protocol messages is written to stdout; logs go to
// [Options.Logger].
func ServeStdio(cx context.Context, opts Options) error {
	return serveTransport(cx, opts, &mcp.StdioTransport{})
}

// ServeIO is [ServeStdio] over the given streams instead of the process's stdin and
// stdout: it serves one session read from r and written to w until cx is done or r ends.
func ServeIO(cx context.Context, opts Options, r io.ReadCloser, w io.WriteCloser) error {
	return serveTransport(cx, opts, &mcp.IOTransport{Reader: r, Writer: w})
}

// serveTransport runs one session of a fresh server over t.
func serveTransport(cx context.Context, opts Options, t mcp.Transport) error {
	opts = opts.withDefaults()
	err := newServer(opts, cx.Done()).Run(cx, t)
	switch {
	case err == nil, errors.Is(err, io.EOF):
		return nil
	case cx.Err() != nil && errors.Is(err, cx.Err()):
		return nil
	}
	return fmt.Errorf("demoserver: serving stdio: %w", err)
}

// Handler returns a Streamable HTTP handler serving the demo server.
//
// Every session of the handler is served by one shared server created here:
// tools registered with add_tool are visible to all of the handler's sessions,
// and each of them receives notifications/tools/list_changed. Two handlers
// never share state. The handler is stateful (sessions are identified by the
// Mcp-Session-Id header and live until the client deletes them), so clients
// asking for a newer, sessionless protocol negotiate down to the newest
// session-based version; server-to-client notifications reach clients on
// their standalone GET stream. Requests are answered at any path.
//
// The handler is safe for concurrent use. Running slow calls end when their
// client cancels them (notifications/cancelled); use [ServeHTTP] for a server
// that also ends them on shutdown.
func Handler(opts Options) http.Handler {
	opts = opts.withDefaults()
	return streamableHandler(newServer(opts, nil), opts)
}

// HandlerWithClose is [Handler] plus a function that closes every session the handler
// still has open, so that a test (or a server shutting down) leaves no session goroutine
// behind when a client went away without ending its session.
func HandlerWithClose(opts Options) (http.Handler, func()) {
	opts = opts.withDefaults()
	s := newServer(opts, nil)
	return streamableHandler(s, opts), func() {
		for ss := range s.Sessions() {
			_ = ss.Close()
		}
	}
}

// streamableHandler serves every session with s.
func streamableHandler(s *mcp.Server, opts Options) *mcp.StreamableHTTPHandler {
	return mcp.NewStreamableHTTPHandler(
		func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Logger: opts.Logger},
	)
}

// ServeHTTP listens on addr and serves the demo server's [Handler] at the path
// /mcp until ctx is done, then closes every session, ends running slow calls
// and shuts the HTTP server down. It prints the server's URL
// (http://host:port/mcp) on a line of its own to stderr once it is listening.
// It returns nil after a clean shutdown and an error if it cannot listen,
// serve or shut down within a few seconds.
//
// addr is host:port. An empty host means the loopback address 127.0.0.1, not
// every interface ("0.0.0.0:8080" listens on all of them), and an empty addr
// means 127.0.0.1 on a free port.
func ServeHTTP(cx context.Context, addr string, opts Options) error {
	addr = listenAddr(addr)
	var lc net.ListenConfig
	ln, err := lc.Listen(cx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("demoserver: listening on %s: %w", addr, err)
	}
	return serveHTTP(cx, ln, opts, os.Stderr)
}

// listenAddr applies ServeHTTP's loopback defaults to addr.
func listenAddr(addr string) string {
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

// serveHTTP serves the demo server on ln (which it closes) until cx is done,
// announcing the URL on out.
func serveHTTP(cx context.Context, ln net.Listener, opts Options, out io.Writer) error {
	opts = opts.withDefaults()
	srv := newServer(opts, cx.Done())
	mux := http.NewServeMux()
	mux.Handle("/mcp", streamableHandler(srv, opts))
	hs := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(opts.Logger.Handler(), slog.LevelWarn),
	}
	// Shutdown closes the listeners and then runs this hook, so no session
	// created afterwards is missed except by requests already being read;
	// the second pass below catches those.
	hs.RegisterOnShutdown(func() { closeSessions(srv) })

	url := "http://" + ln.Addr().String() + "/mcp"
	opts.Logger.Info("demo server listening", slog.String("url", url), slog.String("server", opts.Name))
	if _, err := fmt.Fprintln(out, url); err != nil {
		_ = ln.Close()
		return fmt.Errorf("demoserver: announcing %s: %w", url, err)
	}

	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		closeSessions(srv)
		return fmt.Errorf("demoserver: serving HTTP on %s: %w", ln.Addr(), err)
	case <-cx.Done():
	}

	scx, cancel := context.WithTimeout(context.WithoutCancel(cx), shutdownTimeout)
	defer cancel()
	err := hs.Shutdown(scx)
	if err != nil {
		opts.Logger.Warn("demo server: graceful shutdown timed out, closing connections",
			slog.String("url", url), slog.Any("err", err))
		err = hs.Close()
	}
	closeSessions(srv)
	if serr := <-served; err == nil && !errors.Is(serr, http.ErrServerClosed) {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("demoserver: shutting down %s: %w", url, err)
	}
	opts.Logger.Info("demo server stopped", slog.String("url", url))
	return nil
}

// closeSessions closes every session of s; each Close waits for the
// session's in-flight requests.
func closeSessions(s *mcp.Server) {
	for ss := range s.Sessions() {
		_ = ss.Close() // best effort: the session is gone either way
	}
}
