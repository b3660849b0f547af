package gateway

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/remote"
)

// What the gateway tells of its downstream sessions (the management page's "Gateway
// sessions"): each session's client (its initialize's clientInfo), route, start and last
// activity, its requests in flight and its last requests with their outcome and duration.
// Never a secret: no token, no Mcp-Session-Id (a session is numbered by the gateway), no
// argument value; a request is named by its method and target (a tool's or prompt's name,
// a resource's URI).

// Limits of what a [SessionsSnapshot] keeps.
const (
	// RecentCalls is how many ended requests each session keeps, newest first.
	RecentCalls = 20
	// EndedSessions is how many ended sessions the snapshot keeps, newest first.
	EndedSessions = 16
)

// SessionsEvent is emitted from the gateway's context (the one given to [New]) after its
// downstream sessions changed: a session began or ended, a request began or ended, at most
// ten times a second (changes meanwhile, or while listeners run, are coalesced into the next
// snapshot: a listener always gets the newest). Listeners run on the gateway's notifier
// goroutine, one at a time.
var SessionsEvent = ctx.NewEvent[SessionsSnapshot]("gateway/sessions")

// SessionsSnapshot is the state of a gateway's downstream sessions. It is a plain value,
// never modified once made.
type SessionsSnapshot struct {
	// Version grows with every change.
	Version uint64 `json:"version"`
	// Sessions are the open sessions in the order they began, then the ended ones (at most
	// EndedSessions), most recently ended first.
	Sessions []SessionInfo `json:"sessions"`
}

// SessionInfo is one downstream session. It is a plain value.
type SessionInfo struct {
	// ID is the gateway's number for the session (1 for its first): never the
	// Mcp-Session-Id, which a client presents with the token.
	ID uint64 `json:"id"`
	// Route is the path of the route the session is on (PathAggregated,
	// PathServers+name, PathAgents+layer or PathSearch).
	Route string `json:"route"`
	// Client and ClientVersion are the clientInfo of the session's initialize;
	// ProtocolVersion the version it asked for.
	Client          string `json:"client,omitempty"`
	ClientVersion   string `json:"clientVersion,omitempty"`
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// Started is when the session began; LastActive when its last request began or ended;
	// Ended when it ended (zero while it is open).
	Started    time.Time `json:"started"`
	LastActive time.Time `json:"lastActive"`
	Ended      time.Time `json:"ended,omitzero"`
	// Requests counts the session's requests (pings not counted).
	Requests int `json:"requests"`
	// InFlight are the requests running now, oldest first; Recent the last ended ones
	// (at most RecentCalls), newest first.
	InFlight []CallInfo `json:"inFlight"`
	Recent   []CallInfo `json:"recent"`
}

// CallInfo is one request of a downstream session. It is a plain value.
type CallInfo struct {
	// Method is the MCP method (tools/call, resources/read, prompts/get, …).
	Method string `json:"method"`
	// Target is the tool or prompt name, or the resource URI, the request names ("" for
	// methods that name none).
	Target string `json:"target,omitempty"`
	// Started is when it began.
	Started time.Time `json:"started"`
	// Status is "" while it runs, then ok, error (a tool's result marked isError), failed
	// (a protocol error) or cancelled.
	Status string `json:"status,omitempty"`
	// DurationMs is how long it ran, once ended.
	DurationMs int64 `json:"durationMs,omitempty"`
}

// Call statuses.
const (
	CallOK        = "ok"
	CallError     = "error"
	CallFailed    = "failed"
	CallCancelled = "cancelled"
)

// sessionBook keeps the sessions' records. Safe for concurrent use.
type sessionBook struct {
	g    *Gateway
	wake chan struct{} // the notifier's: a change happened

	mu      sync.Mutex
	seq     uint64
	version uint64
	open    map[*mcp.ServerSession]*sessionRec
	ended   []SessionInfo // newest first
	callSeq uint64
	closed  bool
}

type sessionRec struct {
	info     SessionInfo
	inFlight map[uint64]*CallInfo
}

func newSessionBook(g *Gateway) *sessionBook {
	return &sessionBook{g: g, wake: make(chan struct{}, 1), open: map[*mcp.ServerSession]*sessionRec{}}
}

// changedLocked records a change and wakes the notifier. The caller holds mu.
func (b *sessionBook) changedLocked() {
	b.version++
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// recLocked returns ss's record, made on first sight (a session that began before the
// gateway saw its initialize, or a stateless one) and then fresh: the caller starts its
// watcher (watch) once it has released mu. The caller holds mu.
func (b *sessionBook) recLocked(ss *mcp.ServerSession, route string) (r *sessionRec, fresh bool) {
	if r := b.open[ss]; r != nil {
		return r, false
	}
	if b.closed {
		return nil, false
	}
	b.seq++
	now := time.Now()
	r = &sessionRec{info: SessionInfo{ID: b.seq, Route: route, Started: now, LastActive: now}, inFlight: map[uint64]*CallInfo{}}
	if p := ss.InitializeParams(); p != nil {
		if p.ClientInfo != nil {
			r.info.Client, r.info.ClientVersion = p.ClientInfo.Name, p.ClientInfo.Version
		}
		r.info.ProtocolVersion = p.ProtocolVersion
	}
	b.open[ss] = r
	return r, true
}

// watch moves ss to the ended sessions when it ends.
func (b *sessionBook) watch(ss *mcp.ServerSession) {
	b.g.whenEnded("gateway:session", ss, func() { b.end(ss) })
}

// opened records ss after its initialize.
func (b *sessionBook) opened(ss *mcp.ServerSession, route string) {
	b.mu.Lock()
	r, fresh := b.recLocked(ss, route)
	if r != nil {
		b.changedLocked()
	}
	b.mu.Unlock()
	if fresh {
		b.watch(ss)
	}
}

// end moves ss to the ended sessions.
func (b *sessionBook) end(ss *mcp.ServerSession) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if rp := b.g.repl; rp != nil {
		rp.forget(ss.ID())
	}
	b.g.tasks.Forget(ss)
	r := b.open[ss]
	if r == nil {
		return
	}
	delete(b.open, ss)
	info := r.info
	info.Ended = time.Now()
	info.InFlight = []CallInfo{}
	b.ended = append([]SessionInfo{info}, b.ended...)
	if len(b.ended) > EndedSessions {
		b.ended = b.ended[:EndedSessions]
	}
	b.changedLocked()
}

// begin records a request of ss; the returned function records its end, given the
// request's context (a request whose context ended was cancelled, whatever it returned).
func (b *sessionBook) begin(ss *mcp.ServerSession, route, method string, req mcp.Request) (end func(cx context.Context, res mcp.Result, err error)) {
	ci := &CallInfo{Method: method, Target: target(req), Started: time.Now()}
	b.mu.Lock()
	r, fresh := b.open[ss], false
	if r == nil && method != discover {
		r, fresh = b.recLocked(ss, route)
	}
	if r == nil {
		b.mu.Unlock()
		return func(context.Context, mcp.Result, error) {}
	}
	b.callSeq++
	id := b.callSeq
	r.inFlight[id] = ci
	r.info.Requests++
	r.info.LastActive = ci.Started
	b.changedLocked()
	b.mu.Unlock()
	if fresh {
		b.watch(ss)
	}
	return func(cx context.Context, res mcp.Result, err error) {
		done := *ci
		now := time.Now()
		done.DurationMs = now.Sub(done.Started).Milliseconds()
		switch {
		case cx.Err() != nil || errors.Is(err, context.Canceled):
			done.Status = CallCancelled
		case err != nil:
			done.Status = CallFailed
		default:
			done.Status = CallOK
			if tr, ok := res.(*mcp.CallToolResult); ok && tr != nil && tr.IsError {
				done.Status = CallError
			}
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		delete(r.inFlight, id)
		r.info.LastActive = now
		r.info.Recent = append([]CallInfo{done}, r.info.Recent...)
		if len(r.info.Recent) > RecentCalls {
			r.info.Recent = r.info.Recent[:RecentCalls]
		}
		b.changedLocked()
	}
}

// discover is the method a client may send before it initializes, on a session of its own
// that ends at once: no session of the page's.
const discover = "server/discover"

// target is what a request names: a tool's or prompt's name, a resource's URI.
func target(req mcp.Request) string {
	switch p := req.GetParams().(type) {
	case *mcp.CallToolParamsRaw:
		return p.Name
	case *mcp.CallToolParams:
		return p.Name
	case *mcp.ReadResourceParams:
		return p.URI
	case *mcp.SubscribeParams:
		return p.URI
	case *mcp.UnsubscribeParams:
		return p.URI
	case *mcp.GetPromptParams:
		return p.Name
	case *mcp.CompleteParams:
		if p.Ref != nil {
			if p.Ref.Name != "" {
				return p.Ref.Name
			}
			return p.Ref.URI
		}
	}
	return ""
}

// Sessions returns the state of the gateway's downstream sessions.
func (g *Gateway) Sessions() SessionsSnapshot {
	b := g.sessions
	b.mu.Lock()
	defer b.mu.Unlock()
	snap := SessionsSnapshot{Version: b.version, Sessions: make([]SessionInfo, 0, len(b.open)+len(b.ended))}
	for _, r := range b.open {
		info := r.info
		info.Recent = slices.Clone(r.info.Recent)
		if info.Recent == nil {
			info.Recent = []CallInfo{}
		}
		info.InFlight = make([]CallInfo, 0, len(r.inFlight))
		for _, c := range r.inFlight {
			info.InFlight = append(info.InFlight, *c)
		}
		slices.SortFunc(info.InFlight, func(a, b CallInfo) int { return a.Started.Compare(b.Started) })
		snap.Sessions = append(snap.Sessions, info)
	}
	slices.SortFunc(snap.Sessions, func(a, b SessionInfo) int { return cmp.Compare(a.ID, b.ID) })
	for _, info := range b.ended {
		if info.Recent == nil {
			info.Recent = []CallInfo{}
		}
		snap.Sessions = append(snap.Sessions, info)
	}
	return snap
}

// sessionsInterval is the least time between two SessionsEvents.
const sessionsInterval = 100 * time.Millisecond

// notify starts the goroutine that emits SessionsEvent after each change (coalesced), a
// goroutine of the gateway's effect.
func (g *Gateway) notify() error {
	_, err := g.life.Go("gateway:sessions", func(runcx context.Context) error {
		for {
			select {
			case <-runcx.Done():
				return nil
			case <-g.sessions.wake:
			}
			if err := SessionsEvent.Emit(g.c, g.Sessions()); err != nil && !errors.Is(err, ctx.ErrInactive) {
				g.log.Warn("a gateway/sessions listener failed", "err", err)
			}
			// At most one snapshot per interval, however busy the sessions: the changes
			// meanwhile coalesce into the next.
			t := time.NewTimer(sessionsInterval)
			select {
			case <-runcx.Done():
				t.Stop()
				return nil
			case <-t.C:
			}
		}
	})
	return err
}

// close takes no more sessions (the gateway is closing).
func (b *sessionBook) close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
}

// MethodSessions is the remote method [Gateway.ExposeRemote] serves: a stream of
// [SessionsSnapshot], the current one at once, then one after each change (coalesced
// while the client reads).
var MethodSessions = remote.NewStreamMethod[struct{}, SessionsSnapshot]("gateway/sessions")

// ExposeRemote makes the gateway's sessions a remote method of c's tree ([MethodSessions]),
// for the management page, as an effect of c's scope: the returned disposer removes it.
// The stream ends when the gateway closes.
func (g *Gateway) ExposeRemote(c *ctx.Context) (ctx.Disposer, error) {
	return MethodSessions.Expose(c, g.streamSessions)
}

var errGatewayClosed = errors.New("gateway: closed")

func (g *Gateway) streamSessions(rcx context.Context, _ struct{}, send func(SessionsSnapshot) error) error {
	wake, err := SessionsEvent.Wake(g.c, nil) // the loop reads the newest snapshot itself
	if err != nil {
		return err
	}
	defer wake.Stop()
	first, sent := true, uint64(0)
	for {
		if snap := g.Sessions(); first || snap.Version != sent {
			if err := send(snap); err != nil {
				return err
			}
			first, sent = false, snap.Version
		}
		if err := wake.Wait(rcx, g.life.Done(), errGatewayClosed); err != nil {
			return err
		}
	}
}
