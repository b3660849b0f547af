package mcpclient

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// dialHTTP connects with the SDK's Streamable HTTP transport and, when the
// server rejects it (a 4xx other than 401/403/408/429 on every POST of the
// attempt, as the MCP spec's backwards-compatibility section describes),
// retries the same URL with the legacy HTTP+SSE transport.
//
// The http.Client has no Timeout: it would cut the long-lived SSE streams
// and slow tool calls. Calls are bounded by their contexts instead.
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
	headers := make(http.Header, len(cfg.Headers))
	for k, v := range cfg.Headers {
		headers.Set(k, v)
	}

	probe := &postProbe{}
	var reached *sync.Once
	if opts.onTransportReady != nil {
		reached = new(sync.Once)
	}
	streamable := &mcp.StreamableClientTransport{
		Endpoint: cfg.URL,
		HTTPClient: &http.Client{Transport: &headerRoundTripper{base: base, headers: headers, probe: probe,
			reached: reached, onReached: opts.onTransportReady}},
	}
	kind := TransportStreamableHTTP
	cs, err := connectSession(cx, cfg, opts, streamable)
	var sse *detachedTransport
	if err != nil && cx.Err() == nil && probe.rejected() {
		log.Info("server rejected Streamable HTTP, trying legacy SSE", "status", probe.lastStatus.Load())
		sse = &detachedTransport{inner: &mcp.SSEClientTransport{
			Endpoint: cfg.URL,
			HTTPClient: &http.Client{Transport: &headerRoundTripper{base: base, headers: headers,
				reached: reached, onReached: opts.onTransportReady}},
		}}
		var sseErr error
		cs, sseErr = connectSession(cx, cfg, opts, sse)
		if sseErr != nil {
			sse.release()
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
		if sse != nil {
			sse.release()
		}
		release()
		return nil
	}), nil
}

// headerRoundTripper adds the configured headers to every request (POST,
// the GET stream, DELETE) and optionally records POST statuses for the SSE
// fallback decision. Headers the SDK set itself (protocol headers such as
// Mcp-Session-Id, Accept, Content-Type) are never overridden.
// It is safe for concurrent use.
type headerRoundTripper struct {
	base    http.RoundTripper
	headers http.Header // canonical keys; read-only
	probe   *postProbe  // nil: not recorded
	// reached, when set, runs onReached once, on the first response.
	reached   *sync.Once
	onReached func()
}

// RoundTrip implements http.RoundTripper. It does not modify req.
func (h *headerRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(h.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range h.headers {
			if _, set := req.Header[k]; !set {
				req.Header[k] = v
			}
		}
	}
	resp, err := h.base.RoundTrip(req)
	if err == nil && h.reached != nil {
		h.reached.Do(h.onReached)
	}
	if err == nil && h.probe != nil && req.Method == http.MethodPost {
		h.probe.record(resp.StatusCode)
	}
	return resp, err
}

// postProbe remembers how a server answered the POSTs of one Streamable
// HTTP connect attempt. Safe for concurrent use.
type postProbe struct {
	accepted   atomic.Bool  // some POST got a 2xx
	lastStatus atomic.Int32 // last non-2xx status
}

func (p *postProbe) record(status int) {
	if status >= 200 && status < 300 {
		p.accepted.Store(true)
		return
	}
	p.lastStatus.Store(int32(status))
}

// rejected reports whether the server refused Streamable HTTP itself, as
// opposed to refusing us (auth), being busy, or failing later.
func (p *postProbe) rejected() bool {
	if p.accepted.Load() {
		return false
	}
	switch status := int(p.lastStatus.Load()); status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusRequestTimeout, http.StatusTooManyRequests:
		return false
	default:
		return status >= 400 && status < 500
	}
}

// detachedTransport keeps a transport's long-lived resources (the legacy
// SSE transport's GET stream, which the SDK ties to the connect cx) alive
// after the connect cx ends, while still aborting a connect that
// outlives it. release ends them; call it once the session is closed.
type detachedTransport struct {
	inner  mcp.Transport
	cancel atomic.Pointer[context.CancelFunc]
}

// Connect implements mcp.Transport.
func (t *detachedTransport) Connect(cx context.Context) (mcp.Connection, error) {
	lifecx, cancel := context.WithCancel(context.WithoutCancel(cx))
	t.cancel.Store(&cancel)
	stop := context.AfterFunc(cx, cancel)
	conn, err := t.inner.Connect(lifecx)
	if !stop() { // ctx ended during the connect and aborted it
		if err == nil {
			_ = conn.Close()
		}
		return nil, fmt.Errorf("connect: %w", context.Cause(cx))
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return conn, nil
}

// release cancels the connection's lifetime context.
func (t *detachedTransport) release() {
	if cancel := t.cancel.Load(); cancel != nil {
		(*cancel)()
	}
}
