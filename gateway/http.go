package gateway

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/gateway/access"
	"github.com/cordisgo/harness/internal/loopback"
	"github.com/cordisgo/harness/plugins/mcpclient"
)

// Route paths.
const (
	PathAggregated = "/mcp"
	PathAgents     = "/mcp/agents/"
	PathServers    = "/mcp/servers/"
	// PathSuffix ends the alternative path of a per-server and an agent route:
	// /mcp/servers/<name>/mcp is /mcp/servers/<name>, for clients that guess the
	// transport from a URL's last segment.
	PathSuffix = "/mcp"
)

// ErrInsecure is matched by the error of [HTTPOptions.Check] for a configuration that would
// expose the fleet without authentication.
var ErrInsecure = errors.New("gateway: insecure HTTP configuration")

// HTTPOptions configures [Gateway.Handler].
type HTTPOptions struct {
	// Token is the bearer token every request must carry (Authorization: Bearer <token>).
	// Empty requires NoAuth.
	Token string
	// NoAuth serves without a token. Check refuses it on a non-loopback address.
	NoAuth bool
	// Addr is the listening address, host:port; it decides which Host headers are accepted
	// (see AllowedHosts).
	Addr string
	// AllowedHosts are Host header values (host or host:port) accepted besides the loopback
	// names (localhost, 127.0.0.1, [::1]) and the host of Addr.
	AllowedHosts []string
	// AllowedOrigins are Origin values (scheme://host[:port]) accepted besides loopback
	// origins. A request without Origin (not from a browser) is accepted.
	AllowedOrigins []string
	// SessionIdleTimeout closes a downstream session that has had no HTTP request or
	// stream open for this long (an abandoned session: its client was killed or forgot
	// it), releasing its subscriptions and goroutines. 0: DefaultSessionIdleTimeout;
	// negative: never.
	SessionIdleTimeout time.Duration
	// Stateless serves the stateless protocol revision (2026-07-28, SEP-2575) to the clients
	// that ask for it (their requests carry Mcp-Protocol-Version 2026-07-28): each request is
	// served by a session of its own, so any replica serves any request, without affinity.
	// Off, those clients are told the gateway is stateful and initialize a session of an
	// earlier revision (the go-sdk's and the TypeScript SDK's clients do).
	Stateless bool
	// Access makes the gateway an OAuth-protected MCP resource with per-person rules
	// (team.go, package access): every request needs a bearer token of the team's identity
	// provider for this gateway, instead of Token, and the gateway serves its
	// protected-resource metadata.
	Access *access.Policy
}

// Check refuses NoAuth on an address that is not loopback, and a missing token without
// NoAuth.
func (o HTTPOptions) Check() error {
	if o.Access != nil {
		if o.NoAuth {
			return fmt.Errorf("%w: --no-auth with an access file: people sign in with the identity provider", ErrInsecure)
		}
		return nil
	}
	if o.NoAuth {
		if !loopback.IsLoopback(o.Addr) {
			return fmt.Errorf("%w: --no-auth on %q: refused on an address that is not loopback (127.0.0.1, ::1 or localhost)", ErrInsecure, o.Addr)
		}
		return nil
	}
	if o.Token == "" {
		return fmt.Errorf("%w: no bearer token (generate one, configure one, or use --no-auth on loopback)", ErrInsecure)
	}
	return nil
}

// NewToken returns a random bearer token (32 bytes, hex).
func NewToken() string { return loopback.NewToken() }

// Handler serves the routes over Streamable HTTP: PathAggregated, PathAgents+<layer> and
// PathServers+<name> (the last two also with PathSuffix appended). Every request is checked, in this order, for its Host header (DNS
// rebinding: 403), its Origin header (403) and its bearer token (401), on every route.
// An unknown agent or server is 404; a server that has not connected yet is 503, as is
// every request once the gateway has drained ([Gateway.Drain]) or closed, with a
// Retry-After.
// opts must pass Check.
func (g *Gateway) Handler(opts HTTPOptions) (http.Handler, error) {
	if err := opts.Check(); err != nil {
		return nil, err
	}
	h := &httpFront{g: g, opts: opts, routes: map[any]routeTarget{}}
	h.guard = loopback.New(loopback.Options{Addr: opts.Addr, Hosts: opts.AllowedHosts, Origins: opts.AllowedOrigins,
		HostOrigins: true, Token: opts.Token})
	timeout := opts.SessionIdleTimeout
	if timeout == 0 {
		timeout = DefaultSessionIdleTimeout
	}
	if g.repl != nil && timeout > 0 {
		g.repl.ttl = timeout // a record lives as long as an idle session does
	}
	h.reaper = &reaper{g: g, timeout: timeout, now: time.Now, uses: map[string]*sessionUse{}}
	h.reaper.run(reapInterval(timeout))
	h.serveAuthorized = h.serve
	if pol := opts.Access; pol != nil {
		if err := g.useAccess(pol); err != nil {
			return nil, err
		}
		if err := g.usePersonal(pol, g.opts.Vault, pol.Config().Resource); err != nil {
			return nil, err
		}
		h.metadataPath = access.MetadataPath(resourcePath(pol.Config().Resource))
		h.metadata = auth.ProtectedResourceMetadataHandler(pol.Metadata())
		bearer := auth.RequireBearerToken(pol.Verifier(nil), &auth.RequireBearerTokenOptions{
			ResourceMetadataURL: pol.MetadataURL(), Scopes: pol.Config().Scopes})
		h.serveAuthorized = bearer(http.HandlerFunc(h.serve)).ServeHTTP
	}
	return h, nil
}

// resourcePath is the path of a resource URL ("" when it has none or does not parse).
func resourcePath(resource string) string {
	u, err := url.Parse(resource)
	if err != nil {
		return ""
	}
	return u.Path
}

type httpFront struct {
	g      *Gateway
	opts   HTTPOptions
	guard  *loopback.Guard
	reaper *reaper

	// serveAuthorized serves a request that passed the Host and Origin checks: serve behind
	// the bearer token check of the shared token or, with access rules, of the identity
	// provider's tokens.
	serveAuthorized func(http.ResponseWriter, *http.Request)
	metadataPath    string       // with access rules: where the protected-resource metadata is
	metadata        http.Handler // and its handler

	mu     sync.Mutex
	routes map[any]routeTarget // a scope route's server, or a per-server route → its streamable handlers
}

func (h *httpFront) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path == PathHealth && (req.Method == http.MethodGet || req.Method == http.MethodHead) {
		h.g.health(w)
		return
	}
	done, ok := h.g.drain.admit(req.Method == http.MethodGet)
	if !ok {
		refuse(w)
		return
	}
	defer done()
	if err := h.guard.Check(req); err != nil {
		msg := "forbidden: Host header not allowed" // DNS rebinding
		if errors.Is(err, loopback.ErrOrigin) {
			msg = "forbidden: Origin not allowed"
		}
		http.Error(w, msg, loopback.Status(err))
		return
	}
	if h.metadata != nil && req.URL.Path == h.metadataPath {
		h.metadata.ServeHTTP(w, req)
		return
	}
	if h.opts.Access == nil && !h.opts.NoAuth && !h.guard.Authorized(req) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="harness"`)
		http.Error(w, "unauthorized: a bearer token is required", http.StatusUnauthorized)
		return
	}
	h.serveAuthorized(w, req)
}

// serve serves an authorized request.
func (h *httpFront) serve(w http.ResponseWriter, req *http.Request) {
	if p := h.g.personal.Load(); p != nil && strings.HasPrefix(req.URL.Path+"/", PathPersonal) {
		ti := auth.TokenInfoFromContext(req.Context())
		if ti == nil {
			http.Error(w, "sign in first", http.StatusUnauthorized)
			return
		}
		p.servePersonal(w, req, h.g.access.Load().Person(ti))
		return
	}
	if h.g.life.Err() != nil {
		refuse(w)
		return
	}
	path := routePath(req.URL.Path)
	target, status, err := h.route(path)
	if err != nil {
		http.Error(w, err.Error(), status)
		return
	}
	handler := target.handler
	id := req.Header.Get(sessionHeader)
	if h.opts.Stateless && stateless(req) {
		handler, id = target.stateless, ""
	}
	if rp := h.g.repl; rp != nil {
		w.Header().Set(ReplicaHeader, rp.name)
		if id != "" {
			if handler, err = rp.handler(req, id, path, target); err != nil {
				status := http.StatusServiceUnavailable
				if errors.Is(err, errSessionUser) {
					status = http.StatusForbidden
				}
				http.Error(w, err.Error(), status)
				return
			}
		}
	}
	switch req.Method {
	case http.MethodPost:
		defer h.g.bindPost(req)()
		mcpclient.ShimTaskRequest(req) // a tools/call's params.task, which go-sdk drops (mcpclient.TaskServer)
	case http.MethodDelete:
		// The go-sdk's close waits for the session's handlers: end them first.
		h.g.cancelSession(id, errSessionDeleted)
		h.reaper.forget(id)
		handler.ServeHTTP(w, req)
		if rp := h.g.repl; rp != nil {
			rp.drop(req.Context(), id)
		}
		return
	}
	end := h.reaper.begin(id)
	handler.ServeHTTP(w, req)
	end(w.Header().Get(sessionHeader))
}

// routePath is the route a request path names: without a trailing slash, and a per-server
// or agent route's path without PathSuffix.
func routePath(p string) string {
	p = strings.TrimSuffix(p, "/")
	for _, prefix := range []string{PathServers, PathAgents} {
		if rest, ok := strings.CutPrefix(p, prefix); ok {
			if name, ok := strings.CutSuffix(rest, PathSuffix); ok && name != "" && !strings.Contains(name, "/") {
				return prefix + name
			}
		}
	}
	return p
}

// routeTarget is what serves a route: its streamable handlers (one for the stateful
// protocol revisions, one for the stateless 2026-07-28), and the function that gives the
// handler the server of a new session (which a replica taking a session over uses too).
type routeTarget struct {
	handler, stateless http.Handler
	server             func(*http.Request) *mcp.Server
}

// statelessVersion is the first protocol revision without sessions (SEP-2575): its
// requests carry their version in the Mcp-Protocol-Version header and need no session, so
// any replica serves any of them.
const statelessVersion = "2026-07-28"

// stateless reports whether req is a request of the stateless revision.
func stateless(req *http.Request) bool {
	return req.Header.Get("Mcp-Protocol-Version") >= statelessVersion
}

// route returns the streamable handler of path's server, made on first use. Handlers are
// kept per server, not per path, so that a route whose server was rebuilt (an agent scope
// that restarted) gets a handler of its own.
func (h *httpFront) route(path string) (routeTarget, int, error) {
	var srv *mcp.Server
	var err error
	switch {
	case path == PathAggregated:
		srv = h.g.Aggregated()
	case path == PathSearch:
		// A server per session: each session's searches load tools of its own.
		return h.handler(PathSearch, func(*http.Request) *mcp.Server { return h.g.Search() }), 0, nil
	case strings.HasPrefix(path, PathAgents) && !strings.Contains(path[len(PathAgents):], "/"):
		srv, err = h.g.Agent(path[len(PathAgents):])
	case strings.HasPrefix(path, PathServers) && !strings.Contains(path[len(PathServers):], "/"):
		return h.serverRoute(path[len(PathServers):])
	default:
		return routeTarget{}, http.StatusNotFound, fmt.Errorf("no route %q (routes: %s, %s, %s<layer>, %s<server>)", path, PathAggregated, PathSearch, PathAgents, PathServers)
	}
	if err != nil {
		return routeTarget{}, routeStatus(err), err
	}
	return h.handler(srv, func(*http.Request) *mcp.Server { return srv }), 0, nil
}

// serverRoute returns the streamable handler of a per-server route: one per route (not per
// server), whose new sessions get the route's current server (Gateway.Server) while the
// sessions of an earlier server stay with it.
func (h *httpFront) serverRoute(name string) (routeTarget, int, error) {
	r, err := h.g.serverRoute(name)
	if err == nil {
		_, err = r.current() // 503 until the server has connected once
	}
	if err != nil {
		return routeTarget{}, routeStatus(err), err
	}
	return h.handler(r, func(*http.Request) *mcp.Server {
		if s, err := r.current(); err == nil {
			return s
		}
		return r.mcpServer()
	}), 0, nil
}

// handler returns the streamable handlers kept under key, made on first use.
func (h *httpFront) handler(key any, server func(*http.Request) *mcp.Server) routeTarget {
	h.mu.Lock()
	defer h.mu.Unlock()
	t, ok := h.routes[key]
	if !ok {
		t = routeTarget{server: server,
			handler: mcp.NewStreamableHTTPHandler(server, &mcp.StreamableHTTPOptions{Logger: h.g.log}),
			// A request of the stateless revision is served by a session of its own; its
			// end (the client went away) cancels it.
			stateless: mcp.NewStreamableHTTPHandler(server, &mcp.StreamableHTTPOptions{Logger: h.g.log, Stateless: true, PropagateRequestCancellation: true})}
		h.routes[key] = t
	}
	return t
}

func routeStatus(err error) int {
	switch {
	case errors.Is(err, ErrUnknownRoute):
		return http.StatusNotFound
	case errors.Is(err, ErrNotConnected):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}
