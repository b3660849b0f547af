package mcpprompts

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/suggest"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/remote"
)

// Key is the mcpPrompts service.
var Key = ctx.NewKey[*Service]("mcpPrompts")

// Plugin provides the mcpPrompts service ([Key]) and its remote methods. It has no
// configuration (its config type is struct{}) and injects nothing.
var Plugin = ctx.Define(ctx.Meta{Name: "mcpprompts"}, apply)

// Changed is emitted, with the server's name, when a server's prompts may have changed: the
// server announced notifications/prompts/list_changed (the service dropped its listing), or
// its client connected, reconnected or unloaded. A surface that shows prompts lists that
// server again. Listeners run on the SDK's notification goroutine or the client's status
// goroutine: they must return quickly and must not call the service (which would make a
// request from that goroutine); start one instead.
var Changed = ctx.NewEvent[string]("mcp-prompts/changed")

// MaxPrompts is the most prompts one server's listing may hold: a server whose pages never
// end fails the listing instead of growing it without bound.
const MaxPrompts = 10000

// RequestTimeout bounds each request the service makes (a whole listing, a get, a
// completion) when the caller's context allows longer: a server that never answers fails the
// call instead of holding it.
const RequestTimeout = 30 * time.Second

// bounded returns cx limited to RequestTimeout.
func bounded(cx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(cx, RequestTimeout)
}

// timedOut says so in err when rc ran out of time before the caller's cx did.
func timedOut(cx, rcx context.Context, err error) error {
	if errors.Is(rcx.Err(), context.DeadlineExceeded) && cx.Err() == nil {
		return fmt.Errorf("no answer within %v: %w", RequestTimeout, err)
	}
	return err
}

// Prompt is one prompt template of a server. It is a plain value.
type Prompt struct {
	// Server is the MCP server's serverName; Name the prompt's name on that server.
	Server string `json:"server"`
	Name   string `json:"name"`
	// Title and Description are the server's, for people.
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Arguments are the template's arguments, in the server's order (never nil).
	Arguments []Argument `json:"arguments"`
}

// Argument is one argument of a [Prompt]. It is a plain value.
type Argument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Required arguments must be given to [Service.Get].
	Required bool `json:"required"`
}

// CompleteRequest asks for the completions of one argument: of a prompt (Prompt set, a
// ref/prompt) or of a resource template (URI set to its URI template, a ref/resource).
// Exactly one of Prompt and URI is set. It is a plain value; it is also the parameters of
// the prompts/complete remote method.
type CompleteRequest struct {
	Server string `json:"server"`
	Prompt string `json:"prompt,omitempty"`
	URI    string `json:"uri,omitempty"`
	// Argument is the argument's name and Value what has been typed of it so far.
	Argument string `json:"argument"`
	Value    string `json:"value"`
	// Context holds the arguments already chosen, which servers may use to narrow the
	// values.
	Context map[string]string `json:"context,omitempty"`
}

// Sentinel errors, the causes of an [*Error]. Match them with [errors.Is].
var (
	// ErrUnknownServer: no MCP server of that name is visible from the calling scope.
	ErrUnknownServer = errors.New("unknown MCP server")
	// ErrUnknownPrompt: the server has no prompt of that name (or offers no prompts).
	ErrUnknownPrompt = errors.New("unknown prompt")
	// ErrUnknownArgument: the prompt declares no argument of that name.
	ErrUnknownArgument = errors.New("unknown prompt argument")
	// ErrMissingArgument: a required argument was not given.
	ErrMissingArgument = errors.New("missing required prompt argument")
	// ErrInvalidRequest: a completion request names neither or both of a prompt and a URI.
	ErrInvalidRequest = errors.New("invalid prompt request")
	// ErrNotConnected: the server's client is not connected (starting, reconnecting,
	// failed).
	ErrNotConnected = errors.New("MCP server not connected")
	// ErrClosed: the service's scope has unloaded.
	ErrClosed = errors.New("mcpPrompts service closed")
)

// Error is what the service's methods return when they fail: which server and prompt, and
// why (Err: one of the sentinels, or the server's or the SDK's error). Its message is one
// sentence, with a did-you-mean where one helps. An Error is not modified once returned.
type Error struct {
	Server string
	Prompt string // "" when the failure is the server's (a listing)
	Err    error
	msg    string
}

// Error returns the message.
func (e *Error) Error() string { return e.msg }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// RemoteCode is the remote API's code for the error: not_found, bad_request, unavailable
// or (a server's failure) method_error.
func (e *Error) RemoteCode() remote.Code {
	switch {
	case errors.Is(e.Err, ErrUnknownServer), errors.Is(e.Err, ErrUnknownPrompt):
		return remote.CodeNotFound
	case errors.Is(e.Err, ErrUnknownArgument), errors.Is(e.Err, ErrMissingArgument), errors.Is(e.Err, ErrInvalidRequest):
		return remote.CodeBadRequest
	case errors.Is(e.Err, ErrNotConnected), errors.Is(e.Err, ErrClosed):
		return remote.CodeUnavailable
	}
	return remote.CodeMethodError
}

func newError(server, prompt string, cause error, format string, args ...any) *Error {
	return &Error{Server: server, Prompt: prompt, Err: cause, msg: fmt.Sprintf(format, args...)}
}

// Service lists, gets and completes the prompts of the MCP servers visible from a scope.
// Get it with [Key]; the [Plugin] provides it.
//
// A Service is safe for concurrent use. No lock is held during a request to a server;
// concurrent calls for a server whose listing is not cached may each list it. The cache is
// invalidated from the SDK's notification goroutine and the clients' status reports, which
// only mark it stale.
type Service struct {
	c      *ctx.Context // the service's scope, which emits Changed
	mu     sync.Mutex
	closed bool
	caches map[*mcpclient.Upstream]*cache
}

// cache is one client's listing, valid for one session.
type cache struct {
	u    *mcpclient.Upstream
	stop func() // stops listening to u's notices

	mu      sync.Mutex
	gen     uint64             // bumped by every invalidation
	session *mcp.ClientSession // the session prompts were listed on; nil: nothing cached
	prompts []Prompt
}

func (e *cache) invalidate() {
	e.mu.Lock()
	e.gen++
	e.session, e.prompts = nil, nil
	e.mu.Unlock()
}

func apply(c *ctx.Context, _ struct{}) error {
	s := &Service{c: c, caches: map[*mcpclient.Upstream]*cache{}}
	if _, err := c.Defer("mcpprompts:close", s.close); err != nil {
		return err
	}
	if _, err := mcpclient.StatusEvent.On(c, func(st mcpclient.Status) error {
		s.statusChanged(st)
		return nil
	}); err != nil {
		return err
	}
	if err := s.exposeRemote(c); err != nil {
		return err
	}
	_, err := Key.Provide(c, s)
	return err
}

// close stops listening to every upstream; later calls fail with ErrClosed.
func (s *Service) close(context.Context) error {
	s.mu.Lock()
	caches := s.caches
	s.caches, s.closed = nil, true
	s.mu.Unlock()
	for _, e := range caches {
		e.stop()
	}
	return nil
}

// statusChanged drops the listing of a client whose connection changed, and forgets a
// client that unloaded. A client that connects or unloads is announced (Changed) even when
// nothing of it was cached: its prompts come or go.
func (s *Service) statusChanged(st mcpclient.Status) {
	gone := st.Phase == mcpclient.PhaseDisposed
	var hits []*cache
	s.mu.Lock()
	for u, e := range s.caches {
		if u.Scope() == st.Scope {
			hits = append(hits, e)
			if gone {
				delete(s.caches, u)
			}
		}
	}
	s.mu.Unlock()
	for _, e := range hits {
		e.invalidate()
		if gone {
			e.stop()
		}
	}
	if len(hits) > 0 || gone || st.Phase == mcpclient.PhaseConnected {
		s.changed(st.Server)
	}
}

// changed emits Changed for server.
func (s *Service) changed(server string) {
	if err := Changed.Emit(s.c, server); err != nil {
		s.c.Logger().Warn("prompts changed listener failed", "server", server, "err", err)
	}
}

// cacheOf returns u's cache, listening to u's notices from its first use.
func (s *Service) cacheOf(u *mcpclient.Upstream) (*cache, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if e := s.caches[u]; e != nil {
		return e, nil
	}
	e := &cache{u: u}
	e.stop = u.Listen(func(n mcpclient.Notice) {
		if n.Kind == mcpclient.NoticePromptListChanged {
			e.invalidate()
			s.changed(n.Server)
		}
	})
	s.caches[u] = e
	return e, nil
}

// upstream resolves server as seen from from.
func (s *Service) upstream(from *ctx.Context, server, prompt string) (*mcpclient.Upstream, *mcp.ClientSession, error) {
	u, ok := mcpclient.LookupUpstream(from, server)
	if !ok {
		var names []string
		for _, v := range mcpclient.Upstreams(from) {
			names = append(names, v.Server())
		}
		hint := suggest.Phrase(suggest.Closest(server, names, suggest.Options{}))
		switch {
		case hint != "":
			hint = "; " + hint
		case len(names) > 0:
			hint = " (the servers: " + strings.Join(names, ", ") + ")"
		default:
			hint = " (none is configured)"
		}
		return nil, nil, newError(server, prompt, ErrUnknownServer, "no MCP server %q is visible%s", server, hint)
	}
	cs := u.Session()
	if cs == nil {
		return nil, nil, newError(server, prompt, ErrNotConnected, "MCP server %q is not connected", server)
	}
	return u, cs, nil
}

// offersPrompts reports whether the session's server advertised the prompts capability.
func offersPrompts(cs *mcp.ClientSession) bool {
	ir := cs.InitializeResult()
	return ir != nil && ir.Capabilities != nil && ir.Capabilities.Prompts != nil
}

// listing returns u's prompts on session cs, from the cache unless fresh is set.
func (s *Service) listing(cx context.Context, u *mcpclient.Upstream, cs *mcp.ClientSession, fresh bool) ([]Prompt, error) {
	if !offersPrompts(cs) {
		return nil, nil
	}
	e, err := s.cacheOf(u)
	if err != nil {
		return nil, newError(u.Server(), "", err, "listing the prompts of MCP server %q: %v", u.Server(), err)
	}
	e.mu.Lock()
	if !fresh && e.session == cs {
		out := e.prompts
		e.mu.Unlock()
		return out, nil
	}
	gen := e.gen
	e.mu.Unlock()

	var out []Prompt
	rcx, cancel := bounded(cx)
	defer cancel()
	for p, err := range cs.Prompts(rcx, nil) {
		if err != nil {
			err = timedOut(cx, rcx, err)
			return nil, newError(u.Server(), "", err, "MCP server %q: prompts/list: %v", u.Server(), err)
		}
		if len(out) == MaxPrompts {
			return nil, newError(u.Server(), "", nil, "MCP server %q: prompts/list: more than %d prompts", u.Server(), MaxPrompts)
		}
		out = append(out, promptOf(u.Server(), p))
	}
	e.mu.Lock()
	if e.gen == gen {
		e.session, e.prompts = cs, out
	}
	e.mu.Unlock()
	return out, nil
}

func promptOf(server string, p *mcp.Prompt) Prompt {
	out := Prompt{Server: server, Name: p.Name, Title: p.Title, Description: p.Description,
		Arguments: make([]Argument, 0, len(p.Arguments))}
	for _, a := range p.Arguments {
		if a != nil {
			out.Arguments = append(out.Arguments, Argument{Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required})
		}
	}
	return out
}

// clone returns a copy of ps that shares nothing with the cache.
func clone(ps []Prompt) []Prompt {
	out := slices.Clone(ps)
	for i := range out {
		out[i].Arguments = slices.Clone(out[i].Arguments)
	}
	return out
}

// List returns the prompts of server as seen from from's scope, in the server's order, or
// with server "" those of every visible server (by server name). A server without the
// prompts capability has none.
//
// With server "", the servers that cannot be listed (not connected, or failing) do not stop
// the others: List returns what it could list and an error joining one [*Error] per such
// server.
func (s *Service) List(cx context.Context, from *ctx.Context, server string) ([]Prompt, error) {
	if server != "" {
		u, cs, err := s.upstream(from, server, "")
		if err != nil {
			return nil, err
		}
		ps, err := s.listing(cx, u, cs, false)
		if err != nil {
			return nil, err
		}
		return clone(ps), nil
	}
	// The servers are listed in parallel (a slow one does not delay the others) and
	// reported in order.
	ups := mcpclient.Upstreams(from)
	lists := make([][]Prompt, len(ups))
	errs := make([]error, len(ups))
	var wg sync.WaitGroup
	for i, u := range ups {
		cs := u.Session()
		if cs == nil {
			errs[i] = newError(u.Server(), "", ErrNotConnected, "MCP server %q is not connected", u.Server())
			continue
		}
		wg.Go(func() {
			ps, err := s.listing(cx, u, cs, false)
			lists[i], errs[i] = clone(ps), err
		})
	}
	wg.Wait()
	var out []Prompt
	for _, ps := range lists {
		out = append(out, ps...)
	}
	return out, errors.Join(errs...)
}

// find returns server's prompt name on cs, listing again once when the cached listing
// lacks it.
func (s *Service) find(cx context.Context, u *mcpclient.Upstream, cs *mcp.ClientSession, name string) (Prompt, error) {
	server := u.Server()
	if !offersPrompts(cs) {
		return Prompt{}, newError(server, name, ErrUnknownPrompt, "MCP server %q offers no prompts (it has no prompt %q)", server, name)
	}
	var ps []Prompt
	for _, fresh := range []bool{false, true} {
		var err error
		if ps, err = s.listing(cx, u, cs, fresh); err != nil {
			return Prompt{}, err
		}
		if i := slices.IndexFunc(ps, func(p Prompt) bool { return p.Name == name }); i >= 0 {
			return clone(ps[i : i+1])[0], nil
		}
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return Prompt{}, newError(server, name, ErrUnknownPrompt, "MCP server %q has no prompt %q%s", server, name, hint(name, names, "its prompts"))
}

// hint is "; did you mean …?", or the candidates themselves when there are a few and none
// is close.
func hint(name string, candidates []string, what string) string {
	if h := suggest.Phrase(suggest.Closest(name, candidates, suggest.Options{})); h != "" {
		return "; " + h
	}
	switch {
	case len(candidates) == 0:
		return " (it has none)"
	case len(candidates) <= 12:
		return " (" + what + ": " + strings.Join(candidates, ", ") + ")"
	}
	return ""
}

// Get renders the prompt name of server with args (prompts/get), as seen from from's scope,
// and returns the server's result (its messages). Before the request it checks that the
// server and the prompt exist, that every argument is declared and that every required one
// is given (see the package documentation).
func (s *Service) Get(cx context.Context, from *ctx.Context, server, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	u, cs, err := s.upstream(from, server, name)
	if err != nil {
		return nil, err
	}
	p, err := s.find(cx, u, cs, name)
	if err != nil {
		return nil, err
	}
	if err := checkArguments(p, args); err != nil {
		return nil, err
	}
	rcx, cancel := bounded(cx)
	defer cancel()
	res, err := cs.GetPrompt(rcx, &mcp.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		err = timedOut(cx, rcx, err)
		return nil, newError(server, name, err, "MCP server %q: prompts/get %q: %v", server, name, err)
	}
	if res.Messages == nil {
		res.Messages = []*mcp.PromptMessage{}
	}
	return res, nil
}

// checkArguments refuses arguments p does not declare and missing required ones.
func checkArguments(p Prompt, args map[string]string) error {
	declared := make([]string, len(p.Arguments))
	for i, a := range p.Arguments {
		declared[i] = a.Name
	}
	var unknown []string
	for k := range args {
		if !slices.Contains(declared, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return newError(p.Server, p.Name, ErrUnknownArgument, "prompt %q of MCP server %q has no argument %q%s",
			p.Name, p.Server, unknown[0], hint(unknown[0], declared, "its arguments"))
	}
	var missing []string
	for _, a := range p.Arguments {
		if _, ok := args[a.Name]; a.Required && !ok {
			missing = append(missing, strconv.Quote(a.Name))
		}
	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return newError(p.Server, p.Name, ErrMissingArgument, "prompt %q of MCP server %q needs the argument %s (required)",
			p.Name, p.Server, missing[0])
	}
	return newError(p.Server, p.Name, ErrMissingArgument, "prompt %q of MCP server %q needs the arguments %s and %s (required)",
		p.Name, p.Server, strings.Join(missing[:len(missing)-1], ", "), missing[len(missing)-1])
}

// Complete asks server for the completions of an argument (completion/complete), as seen
// from from's scope. For a prompt, the prompt and its argument are checked first. A server
// that does not advertise the completions capability has none: the answer is an empty list
// of values, without a request.
func (s *Service) Complete(cx context.Context, from *ctx.Context, r CompleteRequest) (mcp.CompletionResultDetails, error) {
	none := mcp.CompletionResultDetails{Values: []string{}}
	if (r.Prompt == "") == (r.URI == "") {
		return none, newError(r.Server, r.Prompt, ErrInvalidRequest, "completion for MCP server %q: name exactly one of a prompt and a resource URI", r.Server)
	}
	u, cs, err := s.upstream(from, r.Server, r.Prompt)
	if err != nil {
		return none, err
	}
	ref := &mcp.CompleteReference{Type: "ref/resource", URI: r.URI}
	what := fmt.Sprintf("resource %q", r.URI)
	if r.Prompt != "" {
		p, err := s.find(cx, u, cs, r.Prompt)
		if err != nil {
			return none, err
		}
		names := make([]string, len(p.Arguments))
		for i, a := range p.Arguments {
			names[i] = a.Name
		}
		if !slices.Contains(names, r.Argument) {
			return none, newError(p.Server, p.Name, ErrUnknownArgument, "prompt %q of MCP server %q has no argument %q%s",
				p.Name, p.Server, r.Argument, hint(r.Argument, names, "its arguments"))
		}
		ref = &mcp.CompleteReference{Type: "ref/prompt", Name: r.Prompt}
		what = fmt.Sprintf("prompt %q", r.Prompt)
	}
	if ir := cs.InitializeResult(); ir == nil || ir.Capabilities == nil || ir.Capabilities.Completions == nil {
		return none, nil
	}
	params := &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: r.Argument, Value: r.Value}}
	if len(r.Context) > 0 {
		params.Context = &mcp.CompleteContext{Arguments: r.Context}
	}
	rcx, cancel := bounded(cx)
	defer cancel()
	res, err := cs.Complete(rcx, params)
	if err != nil {
		err = timedOut(cx, rcx, err)
		return none, newError(r.Server, r.Prompt, err, "MCP server %q: completion/complete of argument %q of %s: %v", r.Server, r.Argument, what, err)
	}
	out := res.Completion
	if out.Values == nil {
		out.Values = []string{}
	}
	return out, nil
}
