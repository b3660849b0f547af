package mcpclient

import (
	"context"
	"fmt"
	"net/http"

	"github.com/cordisgo/harness/plugins/mcpclient/transport"
)

// dialHTTP connects with the SDK's Streamable HTTP transport and, when the
// server rejects it (a 4xx other than 401/403/408/429 on every POST of the
// attempt, as the MCP spec's backwards-compatibility section describes),
// retries the same URL with the legacy HTTP+SSE transport ([transport.HTTP]).
func dialHTTP(cx context.Context, cfg Config, opts dialOptions) (*connection, error) {
	log := opts.log().With("server", cfg.ServerName)
	base := opts.httpBase
	var owned *http.Transport
	if base == nil {
		owned = http.DefaultTransport.(*http.Transport).Clone()
		base = owned
	}
	release := func() {
		if owned != nil {
			owned.CloseIdleConnections()
		}
	}
	if opts.auth != nil {
		base = opts.auth.Transport(base)
	}
	t := transport.NewHTTP(cfg.URL, cfg.Headers, base, opts.onTransportReady)
	t.Rewrite = opts.rewrite()
	kind := TransportStreamableHTTP
	cs, err := connectSession(cx, cfg, opts, t.Streamable())
	if err != nil && cx.Err() == nil && t.Rejected() {
		log.Info("server rejected Streamable HTTP, trying legacy SSE", "status", t.LastStatus())
		var sseErr error
		cs, sseErr = connectSession(cx, cfg, opts, t.LegacySSE())
		if sseErr != nil {
			t.Release()
			err = fmt.Errorf("streamable HTTP: %w; legacy SSE: %w", err, sseErr)
		} else {
			err, kind = nil, TransportLegacySSE
		}
	}
	if err != nil {
		release()
		return nil, connectError(cfg.ServerName, err, "")
	}
	log.Debug("mcp server connected", "transport", kind, "session_id", cs.ID())
	return newConnection(cfg, kind, cs, func(context.Context) error {
		// The SDK bounds its DELETE at 5 s; nothing here can outlive it.
		if err := cs.Close(); err != nil {
			log.Debug("mcp server close", "err", err)
		}
		t.Release()
		release()
		return nil
	}), nil
}
