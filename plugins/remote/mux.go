package remote

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/cordisgo/harness/ctx"
)

// A mux carries any number of stream methods over one event stream, so that a browser tab
// keeps one long-lived connection whatever it follows (browsers allow six per host on
// HTTP/1.1; a page with six streams open could not send a seventh request, an answer to a
// question say). The protocol:
//
//	GET  /v1/mux                  text/event-stream; the first event is
//	                                  event: mux\ndata: {"id": "<mux id>"}
//	POST /v1/mux/{id}/open        {"sub": "<name>", "method": "svc/m", "params": …}
//	                                  → 200 {"result": {}}; then on the stream
//	                                  data: {"sub": name, "value": …}      per value
//	                                  event: end\ndata: {"sub": name}     when the method returns
//	                                  event: error\ndata: {"sub": name, "error": {…}}
//	POST /v1/mux/{id}/close       {"sub": "<name>"} → 200 {"result": {}} (the method's context
//	                                  ends; an end event follows)
//
// A mux ends when its GET does (the client goes away, the host unloads); every method it
// runs is then cancelled and waited for before the GET returns.

// muxes holds the open muxes by id. Safe for concurrent use.
type muxes struct {
	mu sync.Mutex
	m  map[string]*mux
}

// mux is one open multiplexed stream.
type mux struct {
	ev   *eventWriter
	rc   context.Context // every method's parent: ends after the GET, once the mux is unlisted
	mu   sync.Mutex
	subs map[string]func() // the cancel function of each running method, by sub name
	wg   sync.WaitGroup
}

type muxOpen struct {
	Sub    string          `json:"sub"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

type muxSub struct {
	Sub   string `json:"sub"`
	Value any    `json:"value,omitempty"`
	Error *Error `json:"error,omitempty"`
}

// maxMuxSubs bounds the methods one mux runs at once.
const maxMuxSubs = 64

func (h *handler) muxRoute(w http.ResponseWriter, r *http.Request, rest string) {
	if rest == "" {
		if allow(w, r, http.MethodGet) {
			h.muxStream(w, r)
		}
		return
	}
	id, op, _ := strings.Cut(rest, "/")
	if !allow(w, r, http.MethodPost) {
		return
	}
	h.muxes.mu.Lock()
	m := h.muxes.m[id]
	h.muxes.mu.Unlock()
	if m == nil {
		writeError(w, http.StatusNotFound, &Error{Code: CodeNotFound, Message: fmt.Sprintf("no open mux %q (it ended; open GET /v1/mux again)", id)})
		return
	}
	params, ok := h.params(w, r)
	if !ok {
		return
	}
	var req muxOpen
	if err := json.Unmarshal(params, &req); err != nil || req.Sub == "" {
		writeError(w, http.StatusBadRequest, &Error{Code: CodeBadRequest, Message: `expected {"sub": "<name>", …}`})
		return
	}
	switch op {
	case "open":
		meth, ok := h.lookup(w, req.Method, KindStream)
		if !ok {
			return
		}
		if len(req.Params) == 0 {
			req.Params = json.RawMessage("null")
		}
		if e := m.open(h, req.Sub, meth, req.Params); e != nil {
			writeError(w, http.StatusBadRequest, e)
			return
		}
	case "close":
		m.close(req.Sub)
	default:
		writeError(w, http.StatusNotFound, &Error{Code: CodeNotFound, Message: fmt.Sprintf("no such path %q", r.URL.Path)})
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Result struct{} `json:"result"`
	}{})
}

func (h *handler) muxStream(w http.ResponseWriter, r *http.Request) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	rcx := r.Context()
	ev := startEvents(w)
	// The methods' parent ends after the mux is unlisted, so that a method seeing its end
	// implies the mux is gone.
	bcx, cancelAll := context.WithCancel(context.WithoutCancel(rcx))
	defer cancelAll()
	m := &mux{ev: ev, rc: bcx, subs: map[string]func(){}}
	hello, _ := json.Marshal(struct {
		ID string `json:"id"`
	}{id})
	// Listed before the client learns its id, so that an open right after the hello finds it.
	h.muxes.mu.Lock()
	if h.muxes.m == nil {
		h.muxes.m = map[string]*mux{}
	}
	h.muxes.m[id] = m
	h.muxes.mu.Unlock()
	ev.mu.Lock()
	err := ev.writeLocked("mux", hello)
	ev.mu.Unlock()
	if err == nil {
		<-rcx.Done()
	}
	h.muxes.mu.Lock()
	delete(h.muxes.m, id)
	h.muxes.mu.Unlock()
	cancelAll()
	m.wg.Wait()
	ev.mu.Lock()
	ev.closed = true
	ev.mu.Unlock()
}

// open starts meth as the sub called name, or says why not.
func (m *mux) open(h *handler, name string, meth ctx.RemoteMethod, params json.RawMessage) *Error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rc.Err() != nil {
		return &Error{Code: CodeCancelled, Message: "the mux has ended"}
	}
	if _, dup := m.subs[name]; dup {
		return &Error{Code: CodeBadRequest, Message: fmt.Sprintf("sub %q is already open on this mux", name)}
	}
	if len(m.subs) >= maxMuxSubs {
		return &Error{Code: CodeBadRequest, Message: fmt.Sprintf("a mux runs at most %d streams", maxMuxSubs)}
	}
	scx, cancel := context.WithCancel(m.rc)
	m.subs[name] = cancel
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer cancel()
		send := func(v any) error {
			if err := m.send("", muxSub{Sub: name, Value: v}); err != nil {
				return err
			}
			return scx.Err()
		}
		_, err := safeCall(func() (any, error) { return nil, meth.Stream(scx, params, send) })
		m.mu.Lock()
		delete(m.subs, name)
		m.mu.Unlock()
		if err == nil || scx.Err() != nil && errors.Is(err, scx.Err()) {
			_ = m.send("end", muxSub{Sub: name})
			return
		}
		e, _ := h.failure(scx, meth.Name, err)
		_ = m.send("error", muxSub{Sub: name, Error: e})
	}()
	return nil
}

func (m *mux) close(name string) {
	m.mu.Lock()
	cancel := m.subs[name]
	m.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

func (m *mux) send(event string, v muxSub) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("remote mux: value is not JSON: %w", err)
	}
	m.ev.mu.Lock()
	defer m.ev.mu.Unlock()
	switch {
	case m.ev.closed:
		return errStreamClosed
	case m.ev.failed != nil:
		return m.ev.failed
	}
	return m.ev.writeLocked(event, data)
}
