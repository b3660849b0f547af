package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Replicas: N gateways behind a load balancer, sharing a [Store].
//
//   - A session of the stateful protocol revisions is served by the replica that made it
//     while that one lives: the load balancer keeps it there (HAProxy: a stick table on the
//     Mcp-Session-Id response and request headers; docs/gateway.md). Each replica writes
//     what another would need into the store when the session initializes (its ID, route,
//     user, initialize parameters, negotiated version), and again when its log level or
//     subscriptions change.
//   - A replica that gets a request for a session it does not hold — its replica was killed,
//     or is draining for a restart, and the load balancer sent the session elsewhere —
//     takes it over from the store: it connects the route's server to a transport with the
//     session's ID and state, subscribes again to what the session had subscribed to, and
//     serves it from then on. Requests that were in flight on the dead replica fail there
//     (the load balancer answers them; docs/gateway.md has the HAProxy error page).
//   - A session's record expires with the idle timeout (each replica pushes it back while
//     the session is used), and is deleted when the client ends the session or the reaper
//     closes it; a replica that stops leaves its records, so that the sessions can move.
//   - Sessions of protocol 2026-07-28 (stateless) need none of this: any replica serves any
//     request.

// ReplicaHeader names, on every response of a gateway with a [Store], the replica that
// answered ([Options.Replica]).
const ReplicaHeader = "X-Harness-Replica"

// replication is a gateway's part in a set of replicas. It is safe for concurrent use.
type replication struct {
	g     *Gateway
	store Store
	name  string
	ttl   time.Duration // a record's life without use; 0: for ever

	adoptMu sync.Mutex // one take-over at a time
	held    sync.Map   // session ID → *heldSession: the sessions this replica serves
}

// heldSession is a downstream session this replica serves.
type heldSession struct {
	// moved is the session's own transport when this replica took it over (served outside
	// the go-sdk's streamable handler, which cannot be given a session it did not make);
	// nil when the route's handler made it.
	moved   *mcp.StreamableServerTransport
	srv     *mcp.Server // the route's server the session is on (taken over only)
	catchUp atomic.Bool // a session taken over, whose stream has not opened here yet
	ss      *mcp.ServerSession
	mu      sync.Mutex
	rec     SessionRecord // what the store holds; guarded by mu
	touched time.Time     // the last write of the record; guarded by mu
}

func newReplication(g *Gateway, store Store, name string) *replication {
	return &replication{g: g, store: store, name: name}
}

// storeTimeout bounds one store operation made for a request.
const storeTimeout = 5 * time.Second

// opened records a session that initialized on this replica.
func (rp *replication) opened(cx context.Context, ss *mcp.ServerSession, route string, req mcp.Request, res mcp.Result) {
	id := ss.ID()
	if id == "" {
		return // stateless: nothing to move
	}
	rec := SessionRecord{ID: id, Route: route, Replica: rp.name, Started: time.Now().UTC(),
		State: mcp.ServerSessionState{InitializeParams: ss.InitializeParams(), InitializedParams: &mcp.InitializedParams{}}}
	if ir, ok := res.(*mcp.InitializeResult); ok && ir != nil {
		rec.State.NegotiatedProtocolVersion = ir.ProtocolVersion
	}
	if ex := req.GetExtra(); ex != nil && ex.TokenInfo != nil {
		rec.User = ex.TokenInfo.UserID
	}
	h := &heldSession{ss: ss, rec: rec}
	rp.held.Store(id, h)
	rp.save(cx, h)
}

// save writes h's record to the store.
func (rp *replication) save(cx context.Context, h *heldSession) {
	h.mu.Lock()
	rec := h.rec
	rec.Subscriptions = slices.Clone(rec.Subscriptions)
	h.touched = time.Now()
	h.mu.Unlock()
	scx, cancel := context.WithTimeout(context.WithoutCancel(cx), storeTimeout)
	defer cancel()
	if err := rp.store.PutSession(scx, rec, rp.ttl); err != nil {
		rp.g.log.Warn("the session store refused a session's record: the session cannot move to another replica", "err", err)
	}
}

// changed applies edit to the record of ss's session and saves it.
func (rp *replication) changed(cx context.Context, ss *mcp.ServerSession, edit func(*SessionRecord)) {
	v, ok := rp.held.Load(ss.ID())
	if !ok {
		return
	}
	h := v.(*heldSession)
	h.mu.Lock()
	edit(&h.rec)
	h.mu.Unlock()
	rp.save(cx, h)
}

// used pushes the expiry of ss's record back, at most once a quarter of its life.
func (rp *replication) used(cx context.Context, ss *mcp.ServerSession) {
	if rp.ttl <= 0 {
		return
	}
	v, ok := rp.held.Load(ss.ID())
	if !ok {
		return
	}
	h := v.(*heldSession)
	h.mu.Lock()
	due := time.Since(h.touched) >= rp.ttl/4
	if due {
		h.touched = time.Now()
	}
	h.mu.Unlock()
	if !due {
		return
	}
	scx, cancel := context.WithTimeout(context.WithoutCancel(cx), storeTimeout)
	defer cancel()
	if err := rp.store.TouchSession(scx, ss.ID(), rp.ttl); err != nil {
		rp.g.log.Warn("the session store did not extend a session's record", "err", err)
	}
}

// after keeps the store's record of a session current once a request of it was served
// (inFlight): its initialize, its log level, its subscriptions, its use.
func (rp *replication) after(cx context.Context, ss *mcp.ServerSession, route string, req mcp.Request, res mcp.Result, err error) {
	if err != nil || ss.ID() == "" {
		return
	}
	switch p := req.GetParams().(type) {
	case *mcp.InitializeParams:
		rp.opened(cx, ss, route, req, res)
	case *mcp.SetLoggingLevelParams: //nolint:staticcheck // SEP-2577: a session on 2025-11-25 keeps the level it set when it moves
		rp.changed(cx, ss, func(r *SessionRecord) { r.State.LogLevel = p.Level })
	case *mcp.SubscribeParams:
		rp.changed(cx, ss, func(r *SessionRecord) {
			if !slices.Contains(r.Subscriptions, p.URI) {
				r.Subscriptions = append(r.Subscriptions, p.URI)
			}
		})
	case *mcp.UnsubscribeParams:
		rp.changed(cx, ss, func(r *SessionRecord) {
			r.Subscriptions = slices.DeleteFunc(r.Subscriptions, func(u string) bool { return u == p.URI })
		})
	default:
		rp.used(cx, ss)
	}
}

// errSessionUser refuses a request for a session that began with another user's token.
var errSessionUser = errors.New("session user mismatch")

// handler returns what serves a request for session id on route: the route's streamable
// handler for the sessions it made, the session's own transport for one this replica took
// over, and for a session this replica does not hold, the session taken over from the
// store (the route's handler when the store does not know it either: 404).
func (rp *replication) handler(req *http.Request, id, route string, t routeTarget) (http.Handler, error) {
	if v, ok := rp.held.Load(id); ok {
		h := v.(*heldSession)
		if h.moved == nil {
			return t.handler, nil
		}
		return rp.serveMoved(h), nil
	}
	rp.adoptMu.Lock()
	defer rp.adoptMu.Unlock()
	if v, ok := rp.held.Load(id); ok { // taken over meanwhile
		return rp.serveMoved(v.(*heldSession)), nil
	}
	scx, cancel := context.WithTimeout(req.Context(), storeTimeout)
	defer cancel()
	rec, err := rp.store.Session(scx, id)
	if errors.Is(err, ErrNoSession) || err == nil && rec.Route != route {
		return t.handler, nil // unknown here too: the handler's 404 tells the client to start over
	}
	if err != nil {
		return nil, fmt.Errorf("gateway: reading session %s… from the store: %w", shortID(id), err)
	}
	if err := checkUser(req, rec.User); err != nil {
		return nil, err
	}
	srv := t.server(req)
	if srv == nil {
		return nil, fmt.Errorf("gateway: route %s has no server to take session %s… over", route, shortID(id))
	}
	tr := &mcp.StreamableServerTransport{SessionID: id}
	state := rec.State
	ss, err := srv.Connect(context.WithoutCancel(req.Context()), tr, &mcp.ServerSessionOptions{State: &state})
	if err != nil {
		return nil, fmt.Errorf("gateway: taking session %s… over: %w", shortID(id), err)
	}
	prev := rec.Replica
	rec.Replica = rp.name
	h := &heldSession{ss: ss, moved: tr, srv: srv, rec: rec}
	h.catchUp.Store(true)
	rp.held.Store(id, h)
	rp.g.sessions.opened(ss, route)
	for _, uri := range rec.Subscriptions {
		if err := replay(scx, tr, &state, "resources/subscribe", &mcp.SubscribeParams{URI: uri}); err != nil {
			rp.g.log.Warn("a moved session's subscription could not be renewed", "uri", uri, "err", err)
		}
	}
	rp.save(req.Context(), h)
	rp.g.log.Info("took over a downstream session", "route", route, "from_replica", prev, "session", shortID(id))
	return rp.serveMoved(h), nil
}

// replay sends a request to a session taken over, through its transport, as if its client
// had sent it, and reads the answer: how the session gets back what the go-sdk's
// ServerSessionState does not carry (its resource subscriptions, which the go-sdk's server
// records when a client subscribes). The request's ID is the gateway's own, which no
// client's request can be confused with.
func replay(cx context.Context, t *mcp.StreamableServerTransport, state *mcp.ServerSessionState, method string, params any) error {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "harness-gateway:" + method, "method": method, "params": params})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(cx, http.MethodPost, PathAggregated, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(sessionHeader, t.SessionID)
	if state.NegotiatedProtocolVersion != "" {
		req.Header.Set("Mcp-Protocol-Version", state.NegotiatedProtocolVersion)
	}
	w := &bufferedResponse{header: http.Header{}}
	t.ServeHTTP(w, req)
	out := w.body.String()
	if w.status != 0 && w.status != http.StatusOK || !strings.Contains(out, `"result"`) {
		return fmt.Errorf("%s answered %d: %.300s", method, w.status, out)
	}
	return nil
}

// bufferedResponse is the http.ResponseWriter of a replayed request: it keeps the answer.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header         { return b.header }
func (b *bufferedResponse) WriteHeader(status int)      { b.status = status }
func (b *bufferedResponse) Write(p []byte) (int, error) { return b.body.Write(p) }
func (b *bufferedResponse) Flush()                      {}

// serveMoved serves the requests of a session this replica took over.
func (rp *replication) serveMoved(h *heldSession) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		h.mu.Lock()
		user := h.rec.User
		h.mu.Unlock()
		if err := checkUser(req, user); err != nil {
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
		switch req.Method {
		case http.MethodGet:
			// A client resuming its stream from the replica it was on names the last event
			// it saw there: those events died with that replica (no replica keeps them), and
			// the go-sdk refuses a resumption it cannot replay, so the stream starts afresh.
			req.Header.Del("Last-Event-ID")
			if h.catchUp.CompareAndSwap(true, false) {
				w = &firstWrite{ResponseWriter: w, fn: func() { rp.catchUp(h) }}
			}
			h.moved.ServeHTTP(w, req)
		case http.MethodPost:
			h.moved.ServeHTTP(w, req)
		case http.MethodDelete:
			_ = h.ss.Close()
			w.WriteHeader(http.StatusNoContent)
		default:
			w.Header().Set("Allow", "GET, POST, DELETE")
			http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		}
	})
}

// catchUp tells a session taken over, once its stream is open here, that each resource it
// subscribed to may have changed: updates sent while it had no stream open (between the end
// of its replica and its client's reconnection) reached no one, and no replica keeps them.
// Other sessions subscribed to the same URIs are told too, which costs them a read at most.
func (rp *replication) catchUp(h *heldSession) {
	h.mu.Lock()
	uris := slices.Clone(h.rec.Subscriptions)
	h.mu.Unlock()
	if len(uris) == 0 {
		return
	}
	// From a goroutine of the gateway's: the stream's first write is made under the
	// go-sdk's stream lock, which the notifications wait for, so they follow the stream's
	// opening.
	_, _ = rp.g.life.Go("gateway:catch-up", func(runcx context.Context) error {
		for _, uri := range uris {
			if err := h.srv.ResourceUpdated(runcx, &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
				rp.g.log.Warn("telling a moved session that a resource may have changed failed", "uri", uri, "err", err)
			}
		}
		return nil
	})
}

// firstWrite calls fn at the first Write to its ResponseWriter.
type firstWrite struct {
	http.ResponseWriter
	fn   func()
	once sync.Once
}

func (f *firstWrite) Write(p []byte) (int, error) {
	n, err := f.ResponseWriter.Write(p)
	f.once.Do(f.fn)
	return n, err
}

// Unwrap lets http.ResponseController reach the flusher of the wrapped writer.
func (f *firstWrite) Unwrap() http.ResponseWriter { return f.ResponseWriter }

// checkUser refuses req when the session began with another user's token.
func checkUser(req *http.Request, user string) error {
	if user == "" {
		return nil
	}
	if ti := auth.TokenInfoFromContext(req.Context()); ti == nil || ti.UserID != user {
		return errSessionUser
	}
	return nil
}

// forget drops a session that ended from those this replica serves. Its record stays: the
// client ended it (drop deletes the record), or the reaper did (likewise), or this replica
// is stopping, and then another replica takes the session over.
func (rp *replication) forget(id string) {
	if id != "" {
		rp.held.Delete(id)
	}
}

// drop deletes the record of a session that the client ended or the reaper closed.
func (rp *replication) drop(cx context.Context, id string) {
	if id == "" {
		return
	}
	rp.held.Delete(id)
	scx, cancel := context.WithTimeout(context.WithoutCancel(cx), storeTimeout)
	defer cancel()
	if err := rp.store.DeleteSession(scx, id); err != nil {
		rp.g.log.Warn("the session store kept an ended session's record", "err", err)
	}
}

// shortID is the first characters of a session ID, for logs and errors (the ID is a
// credential of sorts: whoever has it and the token can use the session).
func shortID(id string) string { return id[:min(len(id), 6)] }
