package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/secrets"
)

// ServerLog is one notifications/message a server sent: its level (MCP's), logger name and
// data (a string or any JSON value), with configured secrets masked. It is a plain value.
type ServerLog struct {
	// Server is the configured serverName.
	Server string `json:"server"`
	// Scope is the client plugin's scope, which identifies the instance.
	Scope *ctx.Scope `json:"-"`
	// Level is the MCP level (debug … emergency); Logger the server's logger name, if any.
	Level  string `json:"level"`
	Logger string `json:"logger,omitempty"`
	// Message is the data when it is a string, else its JSON.
	Message string `json:"message"`
}

// ServerLogEvent is emitted from the client's context for every log message a server sends,
// after it was written to the client's slog logger (with the key server and the mapped
// level). Listeners run on the SDK's notification goroutine and must return quickly.
var ServerLogEvent = ctx.NewEvent[ServerLog]("mcp-client/server-log")

// protocolOptions sets the notification handlers of a generation's session and the handlers
// of the requests its server may send (serverreq.go).
func (s *supervisor) protocolOptions(g *generation, opts *dialOptions) {
	g.watch.idle = s.cfg.ToolCallTimeout()
	opts.onProgress = func(p *mcp.ProgressNotificationParams) { s.onProgress(g, p) }
	opts.onProgressRead = func(token any) { g.watch.arrive(tokenKey(token)) }
	opts.onLog = s.serverLog
	opts.onClient = func(co *mcp.ClientOptions) func(*mcp.Client) {
		s.resourceHandlers(co)
		withClient := s.serverRequests(g, co)
		return func(cl *mcp.Client) {
			cl.AddReceivingMiddleware(ackMiddleware(g))
			if withClient != nil {
				withClient(cl)
			}
			cl.AddReceivingMiddleware(endWith(g.life))
			cl.AddReceivingMiddleware(recovering(s.log, s.scrub)) // outermost
		}
	}
}

// endWith makes the handling of each of the server's requests end with lifecx (the
// generation's): the SDK's close waits for those handlers, and a server may never take its
// question back (a tool that ignores its own cancellation), so a pending question would
// hold the close, and the host's shutdown, for ever.
func endWith(lifecx context.Context) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(cx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if strings.HasPrefix(method, "notifications/") {
				return next(cx, method, req)
			}
			cx, cancel := context.WithCancelCause(cx)
			defer cancel(nil)
			defer context.AfterFunc(lifecx, func() { cancel(errSessionClosing) })()
			return next(cx, method, req)
		}
	}
}

// errSessionClosing is the cause that ends the server's requests in flight when its session
// closes.
var errSessionClosing = errors.New("the session with the server is closing")

// recovering is the outermost receiving middleware of a server's session: a bug met while
// handling one of the server's requests or notifications (its input is untrusted) fails
// that message with an internal error, logged on log with the panic's stack, instead of
// taking the host down (the SDK runs handlers without a recover). The panic's value is
// logged with the configured secrets masked (scrub).
func recovering(log *slog.Logger, scrub *secrets.Scrubber) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(cx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
			defer func() {
				if v := recover(); v != nil {
					log.Error("handling a message of the server panicked", "method", method, "panic", scrub.Replace(fmt.Sprint(v)), "stack", string(debug.Stack()))
					res, err = nil, errHandlerPanicked
				}
			}()
			return next(cx, method, req)
		}
	}
}

// errHandlerPanicked answers a server's request whose handling panicked.
var errHandlerPanicked = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error: the client failed while handling this request"}

// connected runs right after a generation's handshake, within the startup timeout: it sends
// logging/setLevel when logLevel is configured and the server offers logging. A refusal is
// logged, never fatal: logging is the server's courtesy.
func (s *supervisor) connected(cx context.Context, g *generation) {
	if s.cfg.LogLevel == "" {
		return
	}
	if g.conn.Info().Capabilities.Logging == nil { //nolint:staticcheck // SEP-2577: server logs stay for peers on protocol versions that have them (2025-11-25)
		s.log.Debug("logLevel is set but the server offers no logging")
		return
	}
	err := g.conn.Session().SetLoggingLevel(cx, &mcp.SetLoggingLevelParams{Level: mcp.LoggingLevel(s.cfg.LogLevel)}) //nolint:staticcheck // SEP-2577: server logs stay for peers on protocol versions that have them (2025-11-25)
	if err != nil {
		s.log.Warn("logging/setLevel failed", "level", s.cfg.LogLevel, "err", s.scrubErr(err))
	}
}

// serverLog writes a server's log message to the client's logger and emits ServerLogEvent.
func (s *supervisor) serverLog(p *mcp.LoggingMessageParams) { //nolint:staticcheck // SEP-2577: server logs stay for peers on protocol versions that have them (2025-11-25)
	msg, ok := p.Data.(string)
	if !ok {
		b, err := json.Marshal(p.Data)
		if err != nil {
			msg = "(unprintable log data)"
		} else {
			msg = string(b)
		}
	}
	msg = s.scrub.Replace(msg)
	attrs := []any{"server", s.cfg.ServerName, "mcp_level", string(p.Level)}
	if p.Logger != "" {
		attrs = append(attrs, "logger", p.Logger)
	}
	// The scope's logger, with the server named once (s.log names it already).
	s.c.Logger().Log(context.Background(), slogLevel(p.Level), "mcp server log: "+msg, attrs...)
	if err := ServerLogEvent.Emit(s.c, ServerLog{Server: s.cfg.ServerName, Scope: s.c.Scope(), Level: string(p.Level), Logger: p.Logger, Message: msg}); err != nil {
		s.log.Warn("server log listener failed", "err", err)
	}
}

// idleCause returns the idle timeout that ended cx, or nil.
func idleCause(cx context.Context) error {
	if cx.Err() == nil {
		return nil
	}
	return asIdle(context.Cause(cx))
}

// asIdle returns err when it is an idle timeout, else nil.
func asIdle(err error) error {
	var idle *idleTimeoutError
	if errors.As(err, &idle) {
		return idle
	}
	return nil
}

// readResource sends resources/read for p (its progress token, if any, or a fresh one):
// the read ends when it goes toolCallTimeoutMs without progress (an *idleTimeoutError) or
// when cx ends. p is not modified.
func (s *supervisor) readResource(cx context.Context, g *generation, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	rcx, cancel := context.WithCancelCause(cx)
	defer cancel(context.Canceled)
	f := s.watch(cx, g, "resources/read", p.URI, "", p.GetProgressToken(), cancel)
	params := *p
	params.Meta = withProgressToken(p.Meta, f.wire)
	res, err := g.conn.Session().ReadResource(rcx, &params)
	if err != nil {
		if idle := idleCause(rcx); idle != nil {
			err = idle
		}
	}
	s.unwatch(g, f, err)
	return res, err
}
