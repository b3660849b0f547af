package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/loopback"
)

// Method kinds reported by GET /v1/methods.
const (
	KindCall   = "call"
	KindStream = "stream"
)

// MethodInfo describes one exposed method in the answer of GET /v1/methods.
type MethodInfo struct {
	// Name is "<service>/<method>".
	Name string `json:"name"`
	// Kind is [KindCall] or [KindStream].
	Kind string `json:"kind"`
}

// handler serves the API. Methods are looked up per request, so methods exposed or
// withdrawn while the server runs are seen at once.
type handler struct {
	ctx      *ctx.Context
	guard    *loopback.Guard // Host, loopback Origins and the bearer token
	session  string          // the session cookie's value (see page.go)
	maxBody  int64
	log      *slog.Logger
	inflight tracker
	muxes    muxes
	// remote is Config.AllowRemote: the page may be used from its own origin beyond the
	// loopback (the guard accepts Host headers naming any IP literal or one of allowedHosts).
	remote bool
	// sandboxPort is the apps' sandbox listener's port: the page may frame that origin
	// (sandbox.go), and /v1/methods tells the page where it is.
	sandboxPort string
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Content-Type-Options", "nosniff")
	if !h.inflight.enter() {
		writeError(w, http.StatusServiceUnavailable, &Error{Code: CodeCancelled, Message: "the remote API is shutting down"})
		return
	}
	defer h.inflight.leave()
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler { //nolint:errorlint // a recovered value, compared as net/http does
				panic(v)
			}
			h.log.Error("remote API handler panicked", "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
			writeError(w, http.StatusInternalServerError, &Error{Code: CodeInternal, Message: "internal error"})
		}
	}()

	if !h.guard.Host(r.Host) { // DNS rebinding
		msg := "the Host header must name the loopback (127.0.0.1, [::1] or localhost)"
		if h.remote {
			msg = "the Host header must name the loopback, an IP address or one of allowedHosts"
		}
		writeError(w, http.StatusForbidden, &Error{Code: CodeForbiddenHost, Message: msg})
		return
	}
	origin, hasOrigin := r.Header["Origin"]
	if hasOrigin {
		if len(origin) != 1 || !(h.guard.Origin(origin[0]) || h.remote && sameOrigin(r)) {
			writeError(w, http.StatusForbidden, &Error{Code: CodeForbiddenOrigin, Message: "requests from a non-loopback origin are refused"})
			return
		}
		hdr.Set("Access-Control-Allow-Origin", origin[0])
		hdr.Add("Vary", "Origin")
		if r.Method == http.MethodOptions {
			// A CORS preflight carries no credentials; allow a loopback page to send them.
			hdr.Set("Access-Control-Allow-Methods", "GET, POST")
			hdr.Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
			hdr.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	if h.page(w, r) {
		return
	}
	bearer := h.guard.Authorized(r)
	if !bearer && !h.cookieAuthorized(r) {
		hdr.Set("WWW-Authenticate", `Bearer realm="harness"`)
		writeError(w, http.StatusUnauthorized, &Error{Code: CodeUnauthorized, Message: "missing or wrong bearer token (see the token file)"})
		return
	}
	if !bearer && ((hasOrigin || r.Method != http.MethodGet) && !sameOrigin(r) || !fetchedByPage(r)) {
		// The cookie is the page's: only the page's own origin may use it, and a request
		// that changes state must say where it comes from.
		writeError(w, http.StatusForbidden, &Error{Code: CodeForbiddenOrigin, Message: "a session cookie is accepted only from the page's own origin"})
		return
	}

	rest, ok := strings.CutPrefix(r.URL.Path, "/v1/")
	if !ok {
		writeError(w, http.StatusNotFound, &Error{Code: CodeNotFound, Message: fmt.Sprintf("no such path %q", r.URL.Path)})
		return
	}
	kind, name, _ := strings.Cut(rest, "/")
	switch kind {
	case "methods":
		if name != "" {
			break
		}
		if !allow(w, r, http.MethodGet) {
			return
		}
		h.methods(w, r)
		return
	case "call":
		if !allow(w, r, http.MethodPost) {
			return
		}
		h.call(w, r, name)
		return
	case "mux":
		h.muxRoute(w, r, name)
		return
	case "stream":
		if !allow(w, r, http.MethodGet, http.MethodPost) {
			return
		}
		h.stream(w, r, name)
		return
	}
	writeError(w, http.StatusNotFound, &Error{Code: CodeNotFound, Message: fmt.Sprintf("no such path %q", r.URL.Path)})
}

// allow answers 405 unless r uses one of methods.
func allow(w http.ResponseWriter, r *http.Request, methods ...string) bool {
	for _, m := range methods {
		if r.Method == m {
			return true
		}
	}
	w.Header().Set("Allow", strings.Join(methods, ", "))
	writeError(w, http.StatusMethodNotAllowed, &Error{Code: CodeMethodNotAllowed, Message: fmt.Sprintf("%s is not accepted here; use %s", r.Method, strings.Join(methods, " or "))})
	return false
}

func (h *handler) methods(w http.ResponseWriter, r *http.Request) {
	list := []MethodInfo{}
	for _, m := range h.ctx.RemoteMethods() {
		kind := KindCall
		if m.Stream != nil {
			kind = KindStream
		}
		list = append(list, MethodInfo{Name: m.Name, Kind: kind})
	}
	writeJSON(w, http.StatusOK, struct {
		Methods []MethodInfo `json:"methods"`
		// AppSandbox is the URL of the apps' sandbox proxy on the host the request named.
		AppSandbox string `json:"appSandbox,omitempty"`
	}{list, h.sandboxURL(r.Host)})
}

// lookup finds the method called name of the given kind, answering 404 if there is none.
func (h *handler) lookup(w http.ResponseWriter, name, kind string) (ctx.RemoteMethod, bool) {
	m, e := find(h.ctx, name, kind)
	if e != nil {
		writeError(w, e.Status, e)
		return m, false
	}
	return m, true
}

// request finds the method called name of the given kind and reads its parameters,
// answering the error if either fails.
func (h *handler) request(w http.ResponseWriter, r *http.Request, name, kind string) (ctx.RemoteMethod, json.RawMessage, bool) {
	m, ok := h.lookup(w, name, kind)
	if !ok {
		return m, nil, false
	}
	params, ok := h.params(w, r)
	return m, params, ok
}

// find returns the method of c's tree called name, of the given kind, or the error (404)
// that says why not.
func find(c *ctx.Context, name, kind string) (ctx.RemoteMethod, *Error) {
	m, ok := c.RemoteMethod(name)
	switch {
	case !ok:
		return m, &Error{Code: CodeNotFound, Message: fmt.Sprintf("no remote method %q", name), Status: http.StatusNotFound}
	case kind == KindCall && m.Call == nil:
		return m, &Error{Code: CodeNotFound, Message: fmt.Sprintf("remote method %q is a stream: use /v1/stream/%s", name, name), Status: http.StatusNotFound}
	case kind == KindStream && m.Stream == nil:
		return m, &Error{Code: CodeNotFound, Message: fmt.Sprintf("remote method %q is not a stream: use POST /v1/call/%s", name, name), Status: http.StatusNotFound}
	}
	return m, nil
}

// params reads the JSON parameters: the body, or for a GET the "params" query value. No
// parameters means null.
func (h *handler) params(w http.ResponseWriter, r *http.Request) (json.RawMessage, bool) {
	var raw []byte
	if r.Method == http.MethodGet {
		raw = []byte(r.URL.Query().Get("params"))
		if int64(len(raw)) > h.maxBody {
			writeError(w, http.StatusRequestEntityTooLarge, &Error{Code: CodeTooLarge, Message: fmt.Sprintf("params exceed %d bytes", h.maxBody)})
			return nil, false
		}
	} else {
		b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
		if err != nil {
			if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
				writeError(w, http.StatusRequestEntityTooLarge, &Error{Code: CodeTooLarge, Message: fmt.Sprintf("request body exceeds %d bytes", h.maxBody)})
			} else {
				writeError(w, http.StatusBadRequest, &Error{Code: CodeBadRequest, Message: "could not read the request body"})
			}
			return nil, false
		}
		raw = b
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return json.RawMessage("null"), true
	}
	if !json.Valid(raw) {
		writeError(w, http.StatusBadRequest, &Error{Code: CodeBadRequest, Message: "params are not valid JSON"})
		return nil, false
	}
	return json.RawMessage(raw), true
}

func (h *handler) call(w http.ResponseWriter, r *http.Request, name string) {
	m, params, ok := h.request(w, r, name, KindCall)
	if !ok {
		return
	}
	rcx := r.Context()
	res, err := safeCall(func() (any, error) { return m.Call(rcx, params) })
	if err != nil {
		e, status := h.failure(rcx, name, err)
		writeError(w, status, e)
		return
	}
	body, err := json.Marshal(struct {
		Result any `json:"result"`
	}{res})
	if err != nil {
		h.log.Warn("remote method result is not JSON", "method", name, "err", err)
		writeError(w, http.StatusInternalServerError, &Error{Code: CodeInternal, Message: fmt.Sprintf("the result of %q could not be encoded as JSON", name)})
		return
	}
	writeBody(w, http.StatusOK, body)
}

// failure classifies a method's error.
func (h *handler) failure(rcx context.Context, name string, err error) (*Error, int) {
	return failure(h.log, rcx, name, err)
}

// failure classifies the error of the method called name, run with context rc, logging a
// panic on log.
func failure(log *slog.Logger, rcx context.Context, name string, err error) (*Error, int) {
	if rcx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ctx.ErrScopeUnloaded)) {
		return &Error{Code: CodeCancelled, Message: fmt.Sprintf("remote method %q was cancelled", name)}, http.StatusServiceUnavailable
	}
	if pe, ok := errors.AsType[*panicError](err); ok {
		log.Error("remote method panicked", "method", name, "panic", pe.value, "stack", string(pe.stack))
		return &Error{Code: CodeInternal, Message: fmt.Sprintf("remote method %q panicked", name)}, http.StatusInternalServerError
	}
	e, status := methodError(err)
	log.Debug("remote method failed", "method", name, "code", e.Code)
	return e, status
}

func (h *handler) stream(w http.ResponseWriter, r *http.Request, name string) {
	m, params, ok := h.request(w, r, name, KindStream)
	if !ok {
		return
	}
	rcx := r.Context()
	ev := startEvents(w)
	if err := ev.flush(); err != nil {
		return
	}
	_, err := safeCall(func() (any, error) { return nil, m.Stream(rcx, params, ev.send) })
	ev.mu.Lock()
	defer ev.mu.Unlock()
	ev.closed = true // a send after the handler returned must not touch w
	if ev.failed != nil {
		return // the client is gone
	}
	if err == nil {
		_ = ev.writeLocked("end", []byte("{}"))
		return
	}
	e, _ := h.failure(rcx, name, err)
	body, _ := json.Marshal(errorBody{e})
	_ = ev.writeLocked("error", body)
}

// startEvents answers 200 with an event stream (unbuffered by proxies) and returns its writer.
func startEvents(w http.ResponseWriter) *eventWriter {
	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return &eventWriter{w: w, rc: http.NewResponseController(w)}
}

// eventWriter writes server-sent events; send is safe for concurrent use and fails once
// the stream is over.
type eventWriter struct {
	w      http.ResponseWriter
	rc     *http.ResponseController
	mu     sync.Mutex
	closed bool
	failed error
}

var errStreamClosed = errors.New("remote stream closed")

func (e *eventWriter) send(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("remote stream: value is not JSON: %w", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.closed:
		return errStreamClosed
	case e.failed != nil:
		return e.failed
	}
	return e.writeLocked("", data)
}

// writeLocked writes one event and flushes it. data is compact JSON, so it has no newline.
func (e *eventWriter) writeLocked(event string, data []byte) error {
	var b bytes.Buffer
	if event != "" {
		b.WriteString("event: " + event + "\n")
	}
	b.WriteString("data: ")
	b.Write(data)
	b.WriteString("\n\n")
	if _, err := e.w.Write(b.Bytes()); err != nil {
		e.failed = fmt.Errorf("remote stream: client gone: %w", err)
		return e.failed
	}
	if err := e.flush(); err != nil {
		e.failed = fmt.Errorf("remote stream: client gone: %w", err)
		return e.failed
	}
	return nil
}

func (e *eventWriter) flush() error { return e.rc.Flush() }

// panicError is a panic recovered from a remote method.
type panicError struct {
	value any
	stack []byte
}

func (p *panicError) Error() string { return fmt.Sprintf("panic: %v", p.value) }

// safeCall runs fn, turning a panic into a *panicError.
func safeCall(fn func() (any, error)) (res any, err error) {
	defer func() {
		if v := recover(); v != nil {
			res, err = nil, &panicError{value: v, stack: debug.Stack()}
		}
	}()
	return fn()
}

func writeError(w http.ResponseWriter, status int, e *Error) {
	body, _ := json.Marshal(errorBody{e})
	writeBody(w, status, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, &Error{Code: CodeInternal, Message: "the answer could not be encoded as JSON"})
		return
	}
	writeBody(w, status, body)
}

func writeBody(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
