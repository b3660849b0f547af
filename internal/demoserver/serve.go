package demoserver

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/internal/loopback"
	"github.com/cordisgo/harness/internal/mcpserve"
)

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

// ServeIO is [ServeStdio] over the given streams: it serves one session read from r and
// written to w until cx is done or r ends, as a stdio server when they are the process's
// own (mcpserve.Stdio).
func ServeIO(cx context.Context, opts Options, r io.Reader, w io.Writer) error {
	opts = opts.withDefaults()
	if !opts.started(cx) {
		return nil
	}
	if err := mcpserve.Stdio(cx, newServer(opts, cx.Done()), r, w); err != nil {
		return fmt.Errorf("demoserver: serving stdio: %w", err)
	}
	return nil
}

// serveTransport runs one session of a fresh server over t.
func serveTransport(cx context.Context, opts Options, t mcp.Transport) error {
	opts = opts.withDefaults()
	if err := mcpserve.Transport(cx, newServer(opts, cx.Done()), t); err != nil {
		return fmt.Errorf("demoserver: serving stdio: %w", err)
	}
	return nil
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
	return mcpserve.Handler(s, opts.Logger)
}

// ServeHTTP listens on addr and serves the demo server's [Handler] at the path
// /mcp, behind the loopback guard's Host and Origin checks (no token), until
// ctx is done, then closes every session, ends running slow calls and shuts
// the HTTP server down. It prints the server's URL (http://host:port/mcp) on a
// line of its own to stderr once it is listening.
// It returns nil after a clean shutdown and an error if it cannot listen,
// serve or shut down within a few seconds.
//
// addr is host:port. An empty host means the loopback address 127.0.0.1, not
// every interface ("0.0.0.0:8080" listens on all of them), and an empty addr
// means 127.0.0.1 on a free port.
func ServeHTTP(cx context.Context, addr string, opts Options) error {
	if !opts.started(cx) {
		return nil
	}
	ln, err := mcpserve.Listen(cx, "demoserver", addr)
	if err != nil {
		return err
	}
	return serveHTTP(cx, ln, opts, os.Stderr)
}

// serveHTTP serves the demo server on ln (which it closes) until cx is done,
// announcing the URL on out. Requests pass the loopback guard's Host and Origin
// checks; the demo server asks for no token.
func serveHTTP(cx context.Context, ln net.Listener, opts Options, out io.Writer) error {
	opts = opts.withDefaults()
	return mcpserve.ServeHTTP(cx, ln, newServer(opts, cx.Done()), mcpserve.HTTPOptions{
		What:   "demo server",
		Guard:  loopback.Options{Addr: ln.Addr().String()},
		NoAuth: true,
		Logger: opts.Logger.With(slog.String("server", opts.Name)),
	}, out)
}
