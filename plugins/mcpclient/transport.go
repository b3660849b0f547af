package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/internal/version"
	"github.com/cordisgo/harness/mcpauth"
	"github.com/cordisgo/harness/plugins/mcpclient/transport"
)

// TransportLegacySSE is reported by a connection that fell back to the
// legacy HTTP+SSE transport (2024-11-05). It is not a configuration value:
// configure "streamable-http" and the fallback happens when the server
// rejects Streamable HTTP.
const TransportLegacySSE = "sse"

// ErrCleanupIncomplete means a stdio server's process group could not be
// confirmed gone after close (or after a failed connect), or a session did not end after
// its close. A supervisor must not start another process for the same server while it is
// unresolved: two generations would overlap. It is [transport.ErrCleanupIncomplete].
var ErrCleanupIncomplete = transport.ErrCleanupIncomplete

// errorTailBytes caps the stderr excerpt embedded in error messages;
// StderrTail has the whole buffer.
const errorTailBytes = 1 << 10

// dialOptions are the caller-side hooks and knobs of dial. The zero value
// is valid: every field has a documented default.
type dialOptions struct {
	// clientInfo identifies the harness to the server (nil: "cordisgo-harness"
	// with the module version).
	clientInfo *mcp.Implementation
	// logger receives SDK diagnostics and this package's own (nil: discard).
	logger *slog.Logger
	// onToolListChanged is called on the SDK's notification goroutine for
	// every notifications/tools/list_changed. It must only signal (e.g. a
	// non-blocking send): it blocks every later notification while it runs.
	// nil: no handler, and no list-changed subscription under 2026-07-28.
	onToolListChanged func()
	// onProgress and onLog receive notifications/progress and notifications/message on the
	// SDK's notification goroutine (nil: ignored). They must return quickly.
	onProgress func(*mcp.ProgressNotificationParams)
	// onProgressRead is told the token of each notifications/progress as the transport
	// reads it, before the SDK hands it to onProgress (nil: nobody); on the transport's
	// reading goroutine, so it must return quickly.
	onProgressRead func(token any)
	onLog          func(*mcp.LoggingMessageParams) //nolint:staticcheck // SEP-2577: server logs stay for peers on protocol versions that have them (2025-11-25)
	// parentEnv is the environment a stdio child may inherit from
	// (nil: os.Environ()); goos selects the allow-list ("": runtime.GOOS).
	parentEnv []string
	goos      string
	// stderrTailBytes caps the stderr ring (0: 8 KiB).
	stderrTailBytes int
	// terminateDuration is how long the SDK waits after closing stdin before
	// it signals the child (0: 2s). killGrace is how long the group gets
	// between SIGTERM and SIGKILL (0: 2s).
	terminateDuration time.Duration
	killGrace         time.Duration
	// auth, when set, authorizes HTTP requests (under the header injector, over httpBase).
	auth *mcpauth.Authorizer
	// authStore, authInteractive and authOpenURL shape the authorizer a supervisor or
	// probe builds (nil store: CredentialsStore; nil opener: the browser).
	authStore       mcpauth.Store
	authInteractive bool
	authOpenURL     func(context.Context, string) error
	// authStepUp reports whether a step-up (403 insufficient_scope) may run the browser
	// flow now (mcpauth.Options.StepUp); nil: never.
	authStepUp func(context.Context) bool
	// authSensitive is told the tokens the authorizer uses (mcpauth.Options.Sensitive):
	// the host's scrubber; nil: nobody.
	authSensitive func(string)
	// authRecheck is how often a client in needs-auth re-reads the store (0: 30 s).
	authRecheck time.Duration
	// httpBase is the RoundTripper under the header injector (nil: a
	// private clone of http.DefaultTransport, closed with the connection).
	httpBase http.RoundTripper
	// onTransportReady, if set, is called once the transport reached the
	// server (stdio: the process started; HTTP: the first response
	// arrived), before the MCP handshake completes. Probes use it to tell
	// a failed connect from a failed initialize.
	onTransportReady func()
	// clientOptions, if set, adjusts the SDK client options of every session (the
	// gateway's notice handlers: upstream.go).
	clientOptions func(*mcp.ClientOptions)
	// onClient, if set, adds the handlers of server-initiated requests (elicitation,
	// sampling, roots) and the capabilities they imply to a session's client options, after
	// clientOptions; the function it returns (if any) is called with the new client.
	onClient func(*mcp.ClientOptions) func(*mcp.Client)
}

func (o dialOptions) log() *slog.Logger {
	if o.logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.logger
}

func (o dialOptions) implementation() *mcp.Implementation {
	if o.clientInfo != nil {
		return o.clientInfo
	}
	return &mcp.Implementation{Name: "cordisgo-harness", Version: version.Main()}
}

// dial connects to the server described by cfg (which must have passed
// Validate) and returns a live, initialized connection. ctx bounds the
// whole connect, including process start and the handshake, and should
// carry a deadline (cfg.StartupTimeout); it does not bound the
// connection's lifetime. On failure nothing is left running (or the error
// wraps ErrCleanupIncomplete); errors are prefixed
// `mcp server "<name>": connect:` and, for stdio, carry the stderr tail.
func dial(cx context.Context, cfg Config, opts dialOptions) (*connection, error) {
	if err := cx.Err(); err != nil {
		return nil, connectError(cfg.ServerName, context.Cause(cx), "")
	}
	switch cfg.Transport {
	case TransportStdio:
		return dialStdio(cx, cfg, opts)
	case TransportStreamableHTTP:
		return dialHTTP(cx, cfg, opts)
	default:
		return nil, errUnsupportedTransport(cfg)
	}
}

// connectSession runs the MCP handshake over t with the client this
// package always uses: it advertises no client capabilities but those
// opts.onClient adds (a nil Capabilities would make the SDK offer roots,
// and servers change behaviour when a client offers roots), pins cfg's protocol version and
// forwards tools/list_changed to opts.onToolListChanged.
func connectSession(cx context.Context, cfg Config, opts dialOptions, t mcp.Transport) (*mcp.ClientSession, error) {
	co := &mcp.ClientOptions{
		Logger: opts.log().With("server", cfg.ServerName),
		// MCP Apps: the host renders a tool's ui:// view on its page (docs/web.md, "Apps").
		Capabilities: &mcp.ClientCapabilities{Extensions: map[string]any{UIExtension: map[string]any{"mimeTypes": []string{UIMimeType}}}},
	}
	if signal := opts.onToolListChanged; signal != nil {
		co.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) { signal() }
	}
	if f := opts.clientOptions; f != nil {
		f(co)
	}
	var withClient func(*mcp.Client)
	if f := opts.onClient; f != nil {
		withClient = f(co)
	}
	// The client's own progress and log handlers run first, then any the options set.
	if fn := opts.onProgress; fn != nil {
		next := co.ProgressNotificationHandler
		co.ProgressNotificationHandler = func(cx context.Context, r *mcp.ProgressNotificationClientRequest) {
			if r.Params != nil {
				fn(r.Params)
			}
			if next != nil {
				next(cx, r)
			}
		}
	}
	if fn := opts.onLog; fn != nil {
		next := co.LoggingMessageHandler                                                    //nolint:staticcheck // SEP-2577: server logs stay for peers on protocol versions that have them (2025-11-25)
		co.LoggingMessageHandler = func(cx context.Context, r *mcp.LoggingMessageRequest) { //nolint:staticcheck // SEP-2577: server logs stay for peers on protocol versions that have them (2025-11-25)
			if r.Params != nil {
				fn(r.Params)
			}
			if next != nil {
				next(cx, r)
			}
		}
	}
	client := mcp.NewClient(opts.implementation(), co)
	if withClient != nil {
		withClient(client)
	}
	return client.Connect(cx, t, &mcp.ClientSessionOptions{ProtocolVersion: cfg.EffectiveProtocolVersion()})
}

// initInfo is what the server reported when the session was initialized.
// Capabilities is never nil (empty when the server sent none); a nil
// Capabilities.Tools means the server has no tools.
type initInfo struct {
	ServerName    string
	ServerTitle   string
	ServerVersion string
	// ServerDescription is the server's description of itself (serverInfo.description).
	ServerDescription string
	ProtocolVersion   string
	Instructions      string
	Capabilities      *mcp.ServerCapabilities
}

func newInitInfo(res *mcp.InitializeResult) initInfo {
	info := initInfo{Capabilities: &mcp.ServerCapabilities{}}
	if res == nil {
		return info
	}
	info.ProtocolVersion = res.ProtocolVersion
	info.Instructions = res.Instructions
	if res.Capabilities != nil {
		info.Capabilities = res.Capabilities
	}
	if si := res.ServerInfo; si != nil { // nil under 2026-07-28 discovery
		info.ServerName, info.ServerTitle, info.ServerVersion, info.ServerDescription = si.Name, si.Title, si.Version, si.Description
	}
	return info
}

// connection is one live MCP session and whatever it owns (a process
// group, an HTTP transport). All methods are safe for concurrent use;
// Close is idempotent. Close must be called even after Done is closed:
// a stdio server's process group is only cleaned up by Close.
type connection struct {
	server   string
	kind     string
	session  *mcp.ClientSession
	info     initInfo
	stderr   *transport.TailBuffer // nil unless stdio
	pgid     int                   // 0 unless stdio
	shutdown func(context.Context) error

	done     chan struct{}
	closing  atomic.Bool
	closed   chan struct{}
	closeErr error // written before closed is closed
}

// newConnection wraps a connected session; shutdown closes the session
// and releases what the transport owns.
func newConnection(cfg Config, kind string, cs *mcp.ClientSession, shutdown func(context.Context) error) *connection {
	c := &connection{
		server:   cfg.ServerName,
		kind:     kind,
		session:  cs,
		info:     newInitInfo(cs.InitializeResult()),
		shutdown: shutdown,
		done:     make(chan struct{}),
		closed:   make(chan struct{}),
	}
	go func() {
		_ = cs.Wait()
		close(c.done)
	}()
	return c
}

// Session returns the SDK session for requests (tools/list, tools/call, …).
func (c *connection) Session() *mcp.ClientSession { return c.session }

// Info returns what the server reported at initialization.
func (c *connection) Info() initInfo { return c.info }

// Transport returns the transport in use: "stdio", "streamable-http" or
// "sse" (legacy fallback).
func (c *connection) Transport() string { return c.kind }

// ProcessGroup returns the stdio server's process group id (its pid), or 0.
func (c *connection) ProcessGroup() int { return c.pgid }

// StderrTail returns the last bytes the stdio server wrote to stderr
// ("" for HTTP).
func (c *connection) StderrTail() string {
	if c.stderr == nil {
		return ""
	}
	return c.stderr.Tail()
}

// Done is closed when the session ends: closed by us, or the server went
// away (stdio: its stdout closed; HTTP: the SDK gave the connection up).
// Under stateless HTTP the SDK may never notice a dead server.
func (c *connection) Done() <-chan struct{} { return c.done }

// Close ends the session gracefully and releases everything the
// connection owns. cx bounds the graceful part only: a stdio process
// group is then terminated and killed regardless, within fixed bounds.
// The result wraps ErrCleanupIncomplete if the group could not be
// confirmed gone; other errors are not reported (they are logged by the
// transport). Later calls wait for the first one and return its result,
// or cx's error if cx ends first.
func (c *connection) Close(cx context.Context) error {
	if !c.closing.CompareAndSwap(false, true) {
		select {
		case <-c.closed:
			return c.closeErr
		case <-cx.Done():
			return cx.Err()
		}
	}
	err := c.shutdown(cx)
	select {
	case <-c.done:
	case <-time.After(transport.ReapWait):
		err = errors.Join(err, fmt.Errorf("mcp server %q: session did not end after close: %w", c.server, ErrCleanupIncomplete))
	}
	c.closeErr = err
	close(c.closed)
	return err
}

// connectError formats a failed connect, with the stderr tail if any.
func connectError(server string, err error, stderrTail string) error {
	return &dialError{server: server, err: err, stderr: stderrTail}
}

// dialError is a failed connect: `mcp server "<name>": connect: <err>`,
// followed by an excerpt of the stdio server's stderr when it wrote any.
// The whole tail stays available to status reports. It is immutable.
type dialError struct {
	server string
	err    error
	stderr string
}

func (e *dialError) Error() string {
	if tail := errorTail(e.stderr); tail != "" {
		return fmt.Sprintf("mcp server %q: connect: %v (stderr: %s)", e.server, e.err, tail)
	}
	return fmt.Sprintf("mcp server %q: connect: %v", e.server, e.err)
}

func (e *dialError) Unwrap() error { return e.err }

// stderrOf returns the stderr tail a failed connect carries, or "".
func stderrOf(err error) string {
	var de *dialError
	if errors.As(err, &de) {
		return de.stderr
	}
	return ""
}

// errorTail trims s and keeps at most errorTailBytes of its end, starting
// at a line boundary when one is available.
func errorTail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= errorTailBytes {
		return s
	}
	b := transport.NewTailBuffer(errorTailBytes)
	_, _ = b.Write([]byte(s))
	return "…" + b.Tail()
}
