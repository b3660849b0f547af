package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// Progress is one notifications/progress a server sent for a request of this client (a
// tools/call or a resources/read), or, with Done set, the end of a request that reported
// progress. It is a plain value.
type Progress struct {
	// Server is the configured serverName.
	Server string `json:"server"`
	// Scope is the client plugin's scope, which identifies the instance.
	Scope *ctx.Scope `json:"-"`
	// Method is "tools/call" or "resources/read"; Target is the raw tool name or the URI.
	Method string `json:"method"`
	Target string `json:"target"`
	// CallID is the tool registry's call ID of a tools/call ("" for a resource read).
	CallID string `json:"callId,omitempty"`
	// Token is the progress token the client sent with the request.
	Token string `json:"token"`
	// Progress is how far the request got; Total is the total when the server knows it
	// (0: unknown). Message is the server's description, if any.
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
	// Done is set on the last event of a request that reported progress: it ended (Err says
	// how, when it failed).
	Done bool   `json:"done,omitempty"`
	Err  string `json:"error,omitempty"`
	// Elapsed is the time since the request was sent.
	Elapsed time.Duration `json:"elapsedNs"`
}

// ProgressEvent is emitted from the client's context for every progress notification of a
// tools/call or resources/read in flight, and once more (Done) when such a request ends.
// Requests that report no progress emit nothing. Listeners run on the SDK's notification
// goroutine (Done events: on the caller's) and must return quickly; a listener error is
// logged. Progress also extends the request's idle deadline (toolCallTimeoutMs), under the
// absolute cap (maxToolCallMs).
var ProgressEvent = ctx.NewEvent[Progress]("mcp-client/progress")

// idleTimeoutError is the cancellation cause of a request that went toolCallTimeoutMs
// without progress. It matches context.DeadlineExceeded and toolregistry.ErrTimeout with
// errors.Is (the registry reports it as the tool's error, since its own deadline, the
// absolute cap, did not expire).
type idleTimeoutError struct {
	server, what string
	idle         time.Duration
	progressed   bool
}

func (e *idleTimeoutError) Error() string {
	how := "no answer and no progress"
	if e.progressed {
		how = "no progress"
	}
	return fmt.Sprintf("mcp server %q: %s timed out: %s for %v (toolCallTimeoutMs); the server was sent notifications/cancelled",
		e.server, e.what, how, e.idle)
}

func (e *idleTimeoutError) Is(target error) bool {
	return target == context.DeadlineExceeded || target == toolregistry.ErrTimeout
}

// progressGrace bounds how long the end of a request waits for its progress notifications
// to be handled. The SDK hands notifications to the client on a goroutine of their own,
// apart from responses, so the last notification a server sent before its answer (300 of
// 300) can be handled just after the answer arrived. The transport counts each request's
// notifications as it reads them (onProgressRead), before the answer it read after them, and
// the request's end waits until that many have been handled: the Done event follows every
// notification the server sent before answering, and a request whose notifications are all
// out does not wait at all. The bound only guards against a count the client never reaches
// (a notification the SDK would drop after the transport read it).
const progressGrace = 100 * time.Millisecond

// inflight is one request that carries a progress token: its idle deadline moves with each
// progress notification.
type inflight struct {
	token          string // tokenKey(wire)
	wire           any    // the token as sent
	method, target string
	callID         string
	caller         context.Context // the caller's context: server requests it causes read it
	started        time.Time
	cancel         func(error)
	deadline       atomic.Int64 // unix nanoseconds
	progressed     atomic.Bool
	arrived        atomic.Int64 // its notifications the transport has read (watchdog.arrive)

	mu      sync.Mutex
	handled int64         // of those, the ones emitted (noted)
	caught  chan struct{} // closed once handled reaches arrived (caughtUp)
}

// noted records a notification the client has emitted.
func (f *inflight) noted() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handled++
	if f.caught != nil && f.handled >= f.arrived.Load() {
		close(f.caught)
		f.caught = nil
	}
}

// caughtUp returns a channel closed once every notification the transport has read for f
// so far has been emitted; nil when they all have.
func (f *inflight) caughtUp() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.handled >= f.arrived.Load() {
		return nil
	}
	if f.caught == nil {
		f.caught = make(chan struct{})
	}
	return f.caught
}

// watchdog tracks one generation's requests in flight by progress token and ends those that
// stay silent for idle. Like the tool registry's deadlines, it uses one timer, armed at the
// earliest deadline; a progress notification only moves a deadline later (an atomic store),
// and the timer re-arms itself when it finds a deadline that moved. It is safe for
// concurrent use; its zero value (with idle set) is ready.
type watchdog struct {
	idle time.Duration

	mu      sync.Mutex
	byToken map[string]*inflight
	ending  map[string]*inflight // answered, waiting for their last notification (no deadline)
	timer   *time.Timer
	armed   int64                         // unix nanoseconds when the timer fires; 0 when not armed
	held    int                           // server requests (elicitation, sampling) waiting on the user or a model
	others  map[*context.Context]struct{} // callers of untimed requests in flight (Upstream.Track)
	// quiet is closed while no request is in flight (nil: closed) and replaced by an open
	// one when a request starts: a connection that must renegotiate waits on it (quietCh).
	quiet chan struct{}
}

// busyLocked notes a request starting: quiet is open from now until the last one ends.
func (w *watchdog) busyLocked() {
	if len(w.byToken)+len(w.others) == 0 {
		w.quiet = make(chan struct{})
	}
}

// settleLocked closes quiet when the last request in flight has ended.
func (w *watchdog) settleLocked() {
	if len(w.byToken)+len(w.others) == 0 && w.quiet != nil {
		close(w.quiet)
		w.quiet = nil
	}
}

// quietCh returns a channel closed once no request is in flight (at once when none is).
func (w *watchdog) quietCh() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.quiet == nil {
		return closedCh
	}
	return w.quiet
}

// closedCh is a closed channel.
var closedCh = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// add starts watching f; its deadline is idle from now.
func (w *watchdog) add(f *inflight) {
	now := time.Now()
	f.started = now
	d := now.Add(w.idle).UnixNano()
	f.deadline.Store(d)
	w.mu.Lock()
	if w.byToken == nil {
		w.byToken = make(map[string]*inflight)
	}
	w.busyLocked()
	w.byToken[f.token] = f
	if w.armed == 0 || d < w.armed {
		w.armLocked(d)
	}
	w.mu.Unlock()
}

// remove stops watching f.
func (w *watchdog) remove(f *inflight) {
	w.mu.Lock()
	delete(w.byToken, f.token)
	delete(w.ending, f.token)
	w.settleLocked()
	w.mu.Unlock()
}

// retire moves f, answered, out of the requests in flight (no deadline, no longer keeping
// the connection busy) while its last notifications may still arrive: touch finds it
// until remove.
func (w *watchdog) retire(f *inflight) {
	w.mu.Lock()
	delete(w.byToken, f.token)
	if w.ending == nil {
		w.ending = make(map[string]*inflight)
	}
	w.ending[f.token] = f
	w.settleLocked()
	w.mu.Unlock()
}

// arrive counts a notification of the request with token (in flight or retired) as the
// transport reads it, before the SDK hands it over; unknown tokens are ignored.
func (w *watchdog) arrive(token string) {
	w.mu.Lock()
	f := w.byToken[token]
	if f == nil {
		f = w.ending[token]
	}
	w.mu.Unlock()
	if f != nil {
		f.arrived.Add(1)
	}
}

// touch extends the deadline of the request with token and returns it; an answered one
// still retired is returned as it is; nil: neither.
func (w *watchdog) touch(token string) *inflight {
	w.mu.Lock()
	f, ended := w.byToken[token], false
	if f == nil {
		f, ended = w.ending[token], true
	}
	w.mu.Unlock()
	if f != nil && !ended {
		f.progressed.Store(true)
		f.deadline.Store(time.Now().Add(w.idle).UnixNano())
	}
	return f
}

func (w *watchdog) armLocked(when int64) {
	w.armed = when
	wait := time.Until(time.Unix(0, when))
	if w.timer == nil {
		w.timer = time.AfterFunc(wait, w.fire)
	} else {
		w.timer.Reset(wait)
	}
}

// hold stops the idle deadlines while a server request waits on the user (an elicitation)
// or a model (sampling): the requests in flight are not silent, they wait on us. release
// ends one hold and restarts every deadline from now.
func (w *watchdog) hold() {
	w.mu.Lock()
	w.held++
	w.mu.Unlock()
}

func (w *watchdog) release() {
	next := time.Now().Add(w.idle).UnixNano()
	w.mu.Lock()
	w.held--
	for _, f := range w.byToken {
		if f.deadline.Load() < next {
			f.deadline.Store(next)
		}
	}
	w.mu.Unlock()
}

// callers returns the contexts of the requests in flight.
func (w *watchdog) callers() []context.Context {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]context.Context, 0, len(w.byToken)+len(w.others))
	for _, f := range w.byToken {
		out = append(out, f.caller)
	}
	for p := range w.others {
		out = append(out, *p)
	}
	return out
}

// addCaller records the caller of a request in flight that has no idle deadline (a
// prompts/get, a completion), so that server requests arriving meanwhile are attributed
// with it in view; the returned function forgets it.
func (w *watchdog) addCaller(cx context.Context) func() {
	p := &cx
	w.mu.Lock()
	if w.others == nil {
		w.others = map[*context.Context]struct{}{}
	}
	w.busyLocked()
	w.others[p] = struct{}{}
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		delete(w.others, p)
		w.settleLocked()
		w.mu.Unlock()
	}
}

// fire cancels the requests whose deadline passed and re-arms for the earliest other one.
// While a hold is on, nothing expires: the timer re-arms one idle period later.
func (w *watchdog) fire() {
	now := time.Now().UnixNano()
	var expired []*inflight
	w.mu.Lock()
	if w.held > 0 {
		w.armed = 0
		w.armLocked(now + int64(w.idle))
		w.mu.Unlock()
		return
	}
	next := int64(0)
	for tok, f := range w.byToken {
		d := f.deadline.Load()
		if d <= now {
			expired = append(expired, f)
			delete(w.byToken, tok)
			continue
		}
		if next == 0 || d < next {
			next = d
		}
	}
	w.armed = 0
	if next != 0 {
		w.armLocked(next)
	}
	w.settleLocked()
	w.mu.Unlock()
	for _, f := range expired {
		f.cancel(nil)
	}
}

// stop stops the timer; requests still in flight end with their generation.
func (w *watchdog) stop() {
	w.mu.Lock()
	if w.timer != nil {
		w.timer.Stop()
	}
	w.armed = 0
	w.mu.Unlock()
}

// progressTokenKey is the _meta key of a request's progress token.
const progressTokenKey = "progressToken"

// newToken returns a progress token unique within the supervisor.
func (s *supervisor) newToken() string {
	return "harness-" + strconv.FormatUint(s.tokens.Add(1), 10)
}

// progressRead returns the token of a notifications/progress message as the transport read
// it (decoded as the SDK decodes it: a string, or a number as float64); false for any other
// message.
func progressRead(msg jsonrpc.Message) (any, bool) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.ID.IsValid() || req.Method != "notifications/progress" {
		return nil, false
	}
	var p struct {
		ProgressToken any `json:"progressToken"`
	}
	if json.Unmarshal(req.Params, &p) != nil || p.ProgressToken == nil {
		return nil, false
	}
	return p.ProgressToken, true
}

// tokenKey is the watchdog's key of a progress token: strings and numbers (which JSON
// decodes as float64) never collide.
func tokenKey(t any) string {
	if s, ok := t.(string); ok {
		return s
	}
	return "#" + fmt.Sprint(t)
}

// withProgressToken returns meta with token as its progress token; meta, which the caller
// may share, is copied when it has to change.
func withProgressToken(meta mcp.Meta, token any) mcp.Meta {
	if meta[progressTokenKey] == token {
		return meta
	}
	out := make(mcp.Meta, len(meta)+1)
	maps.Copy(out, meta)
	out[progressTokenKey] = token
	return out
}

// watch starts watching a request made with cx on g under token (nil: a fresh one; a gateway passes its
// client's), and cancel (with the idle timeout error) ends it when it stays silent for
// toolCallTimeoutMs.
func (s *supervisor) watch(cx context.Context, g *generation, method, target, callID string, token any, cancel func(error)) *inflight {
	if token == nil {
		token = s.newToken()
	}
	f := &inflight{token: tokenKey(token), wire: token, method: method, target: target, callID: callID, caller: cx}
	what := method + " " + target
	f.cancel = func(error) {
		cancel(&idleTimeoutError{server: s.cfg.ServerName, what: what, idle: s.cfg.ToolCallTimeout(), progressed: f.progressed.Load()})
	}
	g.watch.add(f)
	return f
}

// unwatch ends watching f; a request that reported progress emits its Done event. An
// answered request first waits for the notifications the transport read before its answer
// to be emitted (see progressGrace), so that the Done event follows every one of them.
func (s *supervisor) unwatch(g *generation, f *inflight, err error) {
	if done := f.caughtUp(); done != nil && err == nil {
		g.watch.retire(f)
		t := time.NewTimer(progressGrace)
		select {
		case <-done:
		case <-t.C:
		case <-g.life.Done():
		}
		t.Stop()
	}
	g.watch.remove(f)
	if !f.progressed.Load() {
		return
	}
	p := Progress{Server: s.cfg.ServerName, Scope: s.c.Scope(), Method: f.method, Target: f.target, CallID: f.callID,
		Token: f.token, Done: true, Elapsed: time.Since(f.started)}
	if err != nil {
		p.Err = s.scrubErr(err)
	}
	s.emitProgress(p)
}

// onProgress is the SDK's progress handler for g: it extends the request's deadline,
// emits ProgressEvent and reports the progress to the caller (toolregistry.ReportProgress).
// Notifications for tokens not in flight (late, or forged) are dropped; an answered
// request's are emitted while unwatch waits for them.
func (s *supervisor) onProgress(g *generation, p *mcp.ProgressNotificationParams) {
	if p.ProgressToken == nil {
		return
	}
	token := tokenKey(p.ProgressToken)
	f := g.watch.touch(token)
	if f == nil {
		return
	}
	msg := s.scrub.Replace(p.Message)
	s.emitProgress(Progress{Server: s.cfg.ServerName, Scope: s.c.Scope(), Method: f.method, Target: f.target, CallID: f.callID,
		Token: token, Progress: p.Progress, Total: p.Total, Message: msg, Elapsed: time.Since(f.started)})
	// The caller that follows its call (an agent's session) gets the same.
	toolregistry.ReportProgress(f.caller, toolregistry.Progress{Progress: p.Progress, Total: p.Total, Message: msg})
	f.noted() // after the event: unwatch emits Done once this one is out
}

func (s *supervisor) emitProgress(p Progress) {
	if err := ProgressEvent.Emit(s.c, p); err != nil {
		s.log.Warn("progress listener failed", "err", err)
	}
}
