package transport

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTP is the transport of a Streamable HTTP server for one dial: the configured headers on
// every request (POST, the GET stream, DELETE), a record of how the server answered the POSTs
// of the connect, which decides the fallback to the legacy HTTP+SSE transport (a 4xx other
// than 401/403/408/429 on every POST of the attempt, as the MCP spec's backwards-compatibility
// section describes), and the legacy transport's stream kept alive past the connect's context.
//
// Connect with [HTTP.Streamable] first; when that failed and [HTTP.Rejected] reports true,
// with [HTTP.LegacySSE] on the same URL; call [HTTP.Release] once the session is closed (or
// the legacy connect failed). Its methods are not for concurrent use; the transports they
// return are.
type HTTP struct {
	// Rewrite, if set, is applied to every JSON-RPC message the server sends (a JSON body,
	// the data of each SSE event) before the SDK reads it: the MCP client's shim for what
	// the SDK's types cannot carry. It returns the message itself when it changes nothing,
	// and must be safe for concurrent use. Set it before the first connect.
	Rewrite func(msg []byte) []byte

	url       string
	base      http.RoundTripper
	headers   http.Header // canonical keys; read-only
	probe     postProbe
	reached   *sync.Once
	onReached func()
	sse       *detachedTransport
}

// NewHTTP returns the transport of the server at url. headers are added to every request
// without overriding the SDK's own (Mcp-Session-Id, Accept, Content-Type); base carries the
// requests (an authorizer's transport, a test's); onReached, if not nil, is called once, on
// the first response. The http.Client has no Timeout: it would cut the long-lived streams
// and slow tool calls; calls are bounded by their contexts.
func NewHTTP(url string, headers map[string]string, base http.RoundTripper, onReached func()) *HTTP {
	h := &HTTP{url: url, base: base, headers: make(http.Header, len(headers)), onReached: onReached}
	for k, v := range headers {
		h.headers.Set(k, v)
	}
	if onReached != nil {
		h.reached = new(sync.Once)
	}
	return h
}

// Streamable returns the SDK's Streamable HTTP transport over the headers, recording the
// POSTs' statuses.
func (h *HTTP) Streamable() mcp.Transport {
	return &mcp.StreamableClientTransport{
		Endpoint: h.url,
		HTTPClient: &http.Client{Transport: &headerRoundTripper{base: h.base, headers: h.headers, probe: &h.probe,
			reached: h.reached, onReached: h.onReached, rewrite: h.Rewrite}},
	}
}

// Rejected reports whether the server refused Streamable HTTP itself, as opposed to refusing
// us (auth), being busy, or failing later: then [HTTP.LegacySSE] is worth a try.
func (h *HTTP) Rejected() bool { return h.probe.rejected() }

// LastStatus returns the last non-2xx status a POST got (0: none).
func (h *HTTP) LastStatus() int { return int(h.probe.lastStatus.Load()) }

// LegacySSE returns the SDK's legacy HTTP+SSE transport (2024-11-05) on the same URL and
// headers, whose GET stream outlives the connect's context until [HTTP.Release].
func (h *HTTP) LegacySSE() mcp.Transport {
	h.sse = &detachedTransport{inner: &mcp.SSEClientTransport{
		Endpoint: h.url,
		HTTPClient: &http.Client{Transport: &headerRoundTripper{base: h.base, headers: h.headers,
			reached: h.reached, onReached: h.onReached, rewrite: h.Rewrite}},
	}}
	return h.sse
}

// Release ends the legacy transport's stream, if there is one.
func (h *HTTP) Release() {
	if h.sse != nil {
		h.sse.release()
	}
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
	rewrite   func([]byte) []byte // HTTP.Rewrite
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
	if err == nil && h.rewrite != nil {
		rewriteBody(resp, h.rewrite)
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
