package gateway

import (
	"context"
	"errors"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A downstream client that goes away cancels its work, and an abandoned session does not
// hold the gateway's resources for ever:
//
//   - every request a route serves runs with a context of its own, registered under its
//     session until it ends (inFlight, a receiving middleware of every route);
//   - a DELETE of a session cancels its requests before the go-sdk closes it (the go-sdk's
//     close waits for the session's handlers, which would wait for their upstream calls);
//   - a request whose HTTP connection ends before its answer was written (the client was
//     killed) is cancelled: each POST carries a gateway header naming it, so that the
//     request's handler can follow the HTTP request's context, from which the go-sdk
//     detaches it;
//   - a session without an HTTP request or stream open for the idle timeout is closed
//     (reaper), which releases its subscriptions and goroutines.

// DefaultSessionIdleTimeout is HTTPOptions.SessionIdleTimeout's default.
const DefaultSessionIdleTimeout = 30 * time.Minute

// postHeader names, on each POST the gateway serves, the HTTP request its messages came
// in (set by the gateway, whatever the client sent).
const postHeader = "X-Harness-Gateway-Post"

const sessionHeader = "Mcp-Session-Id"

var (
	// errSessionDeleted is the cause of requests cancelled by their session's DELETE.
	errSessionDeleted = errors.New("gateway: the downstream session was ended (DELETE)")
	// errClientGone is the cause of a request whose HTTP connection ended before its answer.
	errClientGone = errors.New("gateway: the downstream client went away before the answer")
	// errSessionIdle is the cause of requests of a session closed for being idle.
	errSessionIdle = errors.New("gateway: the downstream session was idle past its timeout")
)

// inFlight is the receiving middleware that gives every request of a downstream session a
// context cancelled by the session's DELETE, by the end of the HTTP request it came in,
// by its reaping, and by the gateway's close; it records the session (on route, the path it
// is served at) and its requests (sessions.go), carries who made it (withRequest) and
// applies the access rules (screen, team.go).
func (g *Gateway) inFlight(route string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(cx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			ss, _ := req.GetSession().(*mcp.ServerSession)
			if ss == nil || strings.HasPrefix(method, "notifications/") {
				return next(cx, method, req)
			}
			cx = g.withRequest(cx, route, ss, req)
			screened := func(cx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				return g.screen(cx, route, method, req, func() (mcp.Result, error) { return next(cx, method, req) })
			}
			if method == "initialize" {
				res, err := screened(cx, method, req)
				if err == nil {
					g.sessions.opened(ss, route)
				}
				if g.repl != nil {
					g.repl.after(cx, ss, route, req, res, err)
				}
				return res, err
			}
			var end func(context.Context, mcp.Result, error)
			if method != "ping" {
				end = g.sessions.begin(ss, route, method, req)
			}
			res, err := g.inFlightCall(cx, ss, method, req, screened, end)
			if g.repl != nil {
				g.repl.after(cx, ss, route, req, res, err)
			}
			return res, err
		}
	}
}

// inFlightCall runs one request of ss with its own context (see inFlight), and then end
// (when not nil) with that context and the outcome.
func (g *Gateway) inFlightCall(cx context.Context, ss *mcp.ServerSession, method string, req mcp.Request, next mcp.MethodHandler,
	end func(context.Context, mcp.Result, error)) (res mcp.Result, err error) {
	cx, cancel := context.WithCancelCause(cx)
	defer cancel(context.Canceled)
	defer context.AfterFunc(g.life, func() { cancel(errClosed) })()
	if ex := req.GetExtra(); ex != nil && ex.Header != nil {
		if v, ok := g.posts.Load(ex.Header.Get(postHeader)); ok {
			stop := context.AfterFunc(v.(context.Context), func() { cancel(errClientGone) })
			defer stop()
		}
	}
	defer g.register(ss, cancel)()
	if end != nil {
		defer func() { end(cx, res, err) }()
	}
	defer func() {
		// A bug met while handling one request answers that request with an internal error,
		// logged with its stack; it does not take the gateway, and every other session, down
		// (the SDK runs handlers without a recover).
		if v := recover(); v != nil {
			g.log.Error("gateway: handling a request panicked", "method", method, "session", ss.ID(), "panic", v, "stack", string(debug.Stack()))
			res, err = nil, errPanicked
		}
	}()
	if g.onRequest != nil {
		g.onRequest(method)
	}
	res, err = next(cx, method, req)
	if failed := err != nil || isToolError(res); failed && errors.Is(context.Cause(cx), errClosed) {
		return nil, errStopped
	}
	return res, err
}

// errStopped answers a request that a gateway's close ended before it was answered (a
// replica's drain that ran out, a gateway closed under load): a JSON-RPC error that says
// to retry, as HAProxy answers for a replica that died (docs/gateway.md, "What fails how").
var errStopped = &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
	Message: "the gateway serving this request stopped before it answered: it may or may not have taken effect; retry it (behind a balancer, the session goes on on another replica)"}

// errPanicked answers a request whose handling panicked.
var errPanicked = &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
	Message: "internal error: the gateway failed while handling this request (its log has the cause)"}

// isToolError reports whether res is a tool call's error result.
func isToolError(res mcp.Result) bool {
	r, ok := res.(*mcp.CallToolResult)
	return ok && r != nil && r.IsError
}

// whenEnded calls end once the downstream session ss has ended, from a goroutine of the
// gateway's effect (at once when the gateway has closed). The gateway's close ends the
// session, once the answers of the requests it ended are written (awaitAnswers).
func (g *Gateway) whenEnded(label string, ss *mcp.ServerSession, end func()) {
	if _, err := g.life.Go(label, func(runcx context.Context) error {
		defer context.AfterFunc(runcx, func() {
			g.awaitAnswers()
			_ = ss.Close()
		})()
		_ = ss.Wait()
		end()
		return nil
	}); err != nil {
		end() // the gateway closed meanwhile
	}
}

// register records cancel as a request of ss in flight until the returned function is called.
func (g *Gateway) register(ss *mcp.ServerSession, cancel context.CancelCauseFunc) (unregister func()) {
	k := new(context.CancelCauseFunc)
	*k = cancel
	g.callsMu.Lock()
	m := g.calls[ss]
	if m == nil {
		m = map[*context.CancelCauseFunc]struct{}{}
		g.calls[ss] = m
	}
	m[k] = struct{}{}
	g.callsMu.Unlock()
	return func() {
		g.callsMu.Lock()
		defer g.callsMu.Unlock()
		delete(m, k)
		if len(m) == 0 { // once out of g.calls, m gains no entries
			delete(g.calls, ss)
		}
	}
}

// cancelSession cancels every request in flight of the downstream session id.
func (g *Gateway) cancelSession(id string, cause error) {
	if id == "" {
		return
	}
	var cancels []context.CancelCauseFunc
	g.callsMu.Lock()
	for ss, m := range g.calls {
		if ss.ID() != id {
			continue
		}
		for k := range m {
			cancels = append(cancels, *k)
		}
	}
	g.callsMu.Unlock()
	for _, c := range cancels {
		c(cause)
	}
}

// bindPost names req (a POST) in its postHeader, so that the requests it carries follow
// its context; the returned function forgets it.
func (g *Gateway) bindPost(req *http.Request) (done func()) {
	key := strconv.FormatUint(g.postSeq.Add(1), 36)
	req.Header.Set(postHeader, key)
	g.posts.Store(key, req.Context())
	return func() { g.posts.Delete(key) }
}

// sessionUse is what the reaper knows of one downstream session: its HTTP requests and
// streams open, and when the last one ended.
type sessionUse struct {
	open int
	last time.Time
}

// reaper closes downstream sessions idle past a timeout. It is safe for concurrent use.
type reaper struct {
	g       *Gateway
	timeout time.Duration // <= 0: never
	now     func() time.Time

	mu   sync.Mutex
	uses map[string]*sessionUse // by session ID
}

// begin counts an HTTP request of session id (empty: a request that may create one) and
// returns the function that ends it, given the response's session ID.
func (r *reaper) begin(id string) (end func(created string)) {
	if r.timeout <= 0 {
		return func(string) {}
	}
	if id != "" {
		r.mu.Lock()
		u := r.uses[id]
		if u == nil {
			u = &sessionUse{}
			r.uses[id] = u
		}
		u.open++
		r.mu.Unlock()
	}
	return func(created string) {
		r.mu.Lock()
		defer r.mu.Unlock()
		now := r.now()
		if id == "" {
			if created != "" && r.uses[created] == nil {
				r.uses[created] = &sessionUse{last: now}
			}
			return
		}
		if u := r.uses[id]; u != nil {
			u.open--
			u.last = now
		}
	}
}

// forget drops session id (it was deleted).
func (r *reaper) forget(id string) {
	r.mu.Lock()
	delete(r.uses, id)
	r.mu.Unlock()
}

// run reaps every interval until the gateway closes.
func (r *reaper) run(interval time.Duration) {
	if r.timeout <= 0 {
		return
	}
	_, _ = r.g.life.Go("gateway:reaper", func(runcx context.Context) error {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-runcx.Done():
				return nil
			case <-t.C:
				r.reap(r.now())
			}
		}
	}) // fails only when the gateway is closed: nothing to reap
}

// reap closes the sessions with no request or stream open since timeout before now, and
// forgets the sessions that ended otherwise. It returns how many it closed.
func (r *reaper) reap(now time.Time) int {
	live := map[string]*mcp.ServerSession{}
	r.g.mu.Lock()
	var servers []*mcp.Server
	if r.g.agg != nil {
		for _, rt := range r.g.allRoutesLocked() {
			servers = append(servers, rt.mcpServers()...)
		}
	}
	r.g.mu.Unlock()
	for _, s := range servers {
		if s == nil {
			continue
		}
		for ss := range s.Sessions() {
			live[ss.ID()] = ss
		}
	}
	var idle []*mcp.ServerSession
	r.mu.Lock()
	for id, u := range r.uses {
		ss, ok := live[id]
		switch {
		case !ok && u.open == 0:
			delete(r.uses, id) // ended otherwise
		case ok && u.open == 0 && now.Sub(u.last) >= r.timeout:
			delete(r.uses, id)
			idle = append(idle, ss)
		}
	}
	r.mu.Unlock()
	for _, ss := range idle {
		r.g.cancelSession(ss.ID(), errSessionIdle)
		_ = ss.Close()
		if rp := r.g.repl; rp != nil {
			rp.drop(context.Background(), ss.ID())
		}
	}
	if len(idle) > 0 {
		r.g.log.Info("closed idle downstream sessions", "sessions", len(idle), "idle_timeout", r.timeout.String())
	}
	return len(idle)
}

// reapInterval is how often the reaper looks: a quarter of the timeout, between 1 s and 1 min.
func reapInterval(timeout time.Duration) time.Duration {
	return min(max(timeout/4, time.Second), time.Minute)
}
