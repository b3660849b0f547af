package elicitation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/cordisgo/harness/ctx"
)

// Mode is how a server asks: a form to fill in, or a URL for the user to visit.
type Mode string

// The modes of MCP's elicitation/create.
const (
	ModeForm Mode = "form"
	ModeURL  Mode = "url"
)

// Action is the user's answer to a request.
type Action string

// The actions of an elicitation result.
const (
	// Accept: the user filled in the form (Content holds the values) or agreed to visit the URL.
	Accept Action = "accept"
	// Decline: the user said no.
	Decline Action = "decline"
	// Cancel: the user dismissed the request without choosing (or it timed out).
	Cancel Action = "cancel"
)

// ErrPass is returned by a responder for a request it does not take (another surface's
// call, a mode it cannot show right now). It is never sent to a server.
var ErrPass = errors.New("elicitation: responder passes")

// ErrNoResponder is the cause logged when nobody could answer a request, which is then
// declined.
var ErrNoResponder = errors.New("elicitation: no responder")

// Origin names the call a context belongs to, for a responder that shows a question next
// to the call that raised it: the session it was made for ("" outside one: a page's own
// call) and the call's name there (an agent's tool call ID, a page's call ref). A plain
// value.
type Origin struct {
	Session string
	Call    string
}

type originKey struct{}

// WithOrigin returns a context for a call made for o: the questions its server asks carry
// it ([OriginOf] of [Request].Call).
func WithOrigin(pcx context.Context, o Origin) context.Context {
	return context.WithValue(pcx, originKey{}, o)
}

// OriginOf returns the origin of the call whose context cx is (or descends from).
func OriginOf(cx context.Context) (Origin, bool) {
	if cx == nil {
		return Origin{}, false
	}
	o, ok := cx.Value(originKey{}).(Origin)
	return o, ok
}

// Request is one elicitation/create from a server, as responders see it. It is a plain value,
// shared by the responders asked: they must not modify it.
type Request struct {
	// Server is the serverName of the MCP client the request came through; Scope is the
	// client's scope.
	Server string
	Scope  *ctx.Scope
	// Mode is ModeForm or ModeURL.
	Mode Mode
	// Message is the server's text for the user.
	Message string
	// Form is the requested schema, parsed (ModeForm; never nil there).
	Form *Form
	// Schema is the requested schema as the server sent it (ModeForm), for a responder that
	// passes the request on (a gateway's downstream session); nil when unknown.
	Schema any
	// URL and ID are the page to visit and the elicitation's ID (ModeURL).
	URL string
	ID  string
	// Call is the context of the tool call or resource read that caused the request, when the
	// client could tell (nil otherwise). Responders read their own values from it.
	Call context.Context
}

// Response is a responder's answer. Content holds the form's values (Accept in ModeForm only).
type Response struct {
	Action  Action
	Content map[string]any
	// Relayed marks an answer relayed from another MCP client (the gateway's downstream
	// session): it goes to the server as given, unchecked against the form, as over a
	// direct connection; the server judges it.
	Relayed bool
}

// Responder answers elicitation requests. Implementations must be safe for concurrent use:
// several requests may be pending at once. Elicit must return when cx ends (the request was
// answered elsewhere, timed out, or the server cancelled it); its result is then ignored.
type Responder interface {
	// Supports reports whether the responder can answer requests of mode (at all: a
	// responder that sometimes cannot returns ErrPass then).
	Supports(mode Mode) bool
	// Elicit asks the user and returns the answer, ErrPass, or an error (logged; the
	// request goes on with the other responders).
	Elicit(cx context.Context, r *Request) (*Response, error)
}

var responders = ctx.NewTreeLayers[Responder]("elicitation responder")

// Provide makes r a responder for requests of the MCP clients in c's layer and below, as an
// effect of c: it goes when the disposer runs or c's scope unloads. name identifies it in
// its layer (a second responder under one name in one layer is an error). [ChangedEvent]
// is emitted from c when it comes and when it goes.
func Provide(c *ctx.Context, name string, r Responder) (ctx.Disposer, error) {
	if r == nil {
		return nil, fmt.Errorf("elicitation: responder %q is nil", name)
	}
	return responders.AddAnnounced(c, name, r, ChangedEvent)
}

// Offer declares, in c's layer, that requests of modes from the MCP clients in c's layer
// and below will be answered, although no responder that answers them may be provided yet:
// a responder provided later (a plugin still loading), or a call's own ([WithResponder], a
// gateway's downstream session). The clients then declare the modes when they connect
// ([Modes]); a request that nobody answers when it arrives is declined. A host offers what
// its profile and its command will answer before it mounts the rows, so that no client has
// to reconnect to declare them. The offer is an effect of c, like [Provide]'s responder.
func Offer(c *ctx.Context, name string, modes ...Mode) (ctx.Disposer, error) {
	if len(modes) == 0 {
		return nil, fmt.Errorf("elicitation: offer %q names no mode", name)
	}
	return Provide(c, name, offer(slices.Clone(modes)))
}

// OfferQuietly is [Offer] announced when the caller says: the offer is in place when it
// returns, and [ChangedEvent] is emitted when announce is called (its going is announced as
// Offer's is). It is for offers of several kinds made as one step (gateway.Offer:
// elicitation and sampling): with all of them in place before any is announced, a client
// connected before them reconnects once, declaring them all, where one announced before
// the next is in place can make it reconnect once per offer.
func OfferQuietly(c *ctx.Context, name string, modes ...Mode) (_ ctx.Disposer, announce func(), _ error) {
	if len(modes) == 0 {
		return nil, nil, fmt.Errorf("elicitation: offer %q names no mode", name)
	}
	return responders.AddAnnouncedLater(c, name, offer(slices.Clone(modes)), ChangedEvent)
}

// offer is what Offer provides: a responder that supports its modes and passes every request.
type offer []Mode

func (o offer) Supports(m Mode) bool { return slices.Contains(o, m) }

func (offer) Elicit(context.Context, *Request) (*Response, error) { return nil, ErrPass }

// Change is a responder provided or gone (ChangedEvent): its name and the layer it is in.
// It is a plain value.
type Change = ctx.LayerChange

// ChangedEvent is emitted from the providing context when a responder (or an [Offer]) is
// provided and when it goes. An MCP client listens, so that one connected before a
// responder came declares its modes from its next connection on (it reconnects when the
// modes it would declare grew). Listeners run on the providing goroutine and must return
// quickly.
var ChangedEvent = ctx.NewEvent[Change]("elicitation/changed")

// Modes returns the modes some responder (or offer) visible from c supports, form first;
// nil when there is none (the capability is then not advertised).
func Modes(c *ctx.Context) []Mode {
	vis := responders.In(c).Visible(c.Scope())
	var out []Mode
	for _, m := range []Mode{ModeForm, ModeURL} {
		if slices.ContainsFunc(vis, func(e ctx.Entry[Responder]) bool { return e.Value.Supports(m) }) {
			out = append(out, m)
		}
	}
	return out
}

type directedKey struct{}

// WithResponder returns a context for a call (a tool call, a resource read) whose
// elicitations go to r before any scoped responder: a gateway passes its downstream
// session's responder this way.
func WithResponder(pcx context.Context, r Responder) context.Context {
	return context.WithValue(pcx, directedKey{}, r)
}

// directed returns the responder set by WithResponder on cx, or nil.
func directed(cx context.Context) Responder {
	if cx == nil {
		return nil
	}
	r, _ := cx.Value(directedKey{}).(Responder)
	return r
}

// Elicit asks the responders visible from c (see the package documentation for the order)
// and returns the first valid answer. It declines, with an error wrapping ErrNoResponder,
// when nobody answered; it returns cx's error when cx ended first. Errors of individual
// responders are joined into the error of a declined request.
func Elicit(cx context.Context, c *ctx.Context, r *Request) (*Response, error) {
	if r.Mode == ModeForm && r.Form == nil {
		r.Form = &Form{}
	}
	var errs []error
	if d := directed(r.Call); d != nil && d.Supports(r.Mode) {
		res, err := ask(cx, d, r)
		if err == nil {
			return res, nil
		}
		if cx.Err() != nil {
			return nil, context.Cause(cx)
		}
		if !errors.Is(err, ErrPass) {
			errs = append(errs, err)
		}
	}
	var rs []Responder
	for _, e := range responders.In(c).Visible(c.Scope()) {
		if e.Value.Supports(r.Mode) {
			rs = append(rs, e.Value)
		}
	}
	res, err := race(cx, rs, r)
	if err == nil {
		return res, nil
	}
	if cx.Err() != nil {
		return nil, context.Cause(cx)
	}
	errs = append(errs, err)
	return &Response{Action: Decline}, errors.Join(errs...)
}

// ask asks one responder and checks its answer.
func ask(cx context.Context, rs Responder, r *Request) (*Response, error) {
	var res *Response
	err := ctx.Safely(func() (err error) { // a responder's bug fails this question only
		res, err = rs.Elicit(cx, r)
		return err
	})
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, errors.New("elicitation: responder returned no answer")
	}
	switch res.Action {
	case Accept:
		if r.Mode == ModeForm {
			if res.Relayed {
				break
			}
			if err := r.Form.Check(res.Content); err != nil {
				return nil, fmt.Errorf("elicitation: answer refused: %w", err)
			}
		} else {
			res.Content = nil
		}
	case Decline, Cancel:
		res.Content = nil
	default:
		return nil, fmt.Errorf("elicitation: responder answered %q, want accept, decline or cancel", res.Action)
	}
	return res, nil
}

// race asks every responder of rs at once; the first valid answer wins and the others are
// cancelled (and waited for). It fails with ErrNoResponder (joined with the responders'
// errors) when none answered.
func race(cx context.Context, rs []Responder, r *Request) (*Response, error) {
	if len(rs) == 0 {
		return nil, ErrNoResponder
	}
	rcx, cancel := context.WithCancel(cx)
	defer cancel()
	type answer struct {
		res *Response
		err error
	}
	answers := make(chan answer, len(rs))
	var wg sync.WaitGroup
	for _, one := range rs {
		wg.Go(func() {
			res, err := ask(rcx, one, r)
			answers <- answer{res, err}
		})
	}
	defer wg.Wait()
	errs := []error{ErrNoResponder}
	for range rs {
		a := <-answers
		if a.err == nil {
			cancel()
			return a.res, nil
		}
		if !errors.Is(a.err, ErrPass) && rcx.Err() == nil {
			errs = append(errs, a.err)
		}
	}
	return nil, errors.Join(errs...)
}

// Completion is a server's notifications/elicitation/complete: the URL-mode elicitation ID
// finished out of band. It is a plain value.
type Completion struct {
	Server string
	Scope  *ctx.Scope
	ID     string
}

// CompleteEvent is emitted from the MCP client's context when a server reports that a
// URL-mode elicitation completed; a responder waiting for it (to close its prompt) listens.
// Listeners run on the SDK's notification goroutine and must return quickly.
var CompleteEvent = ctx.NewEvent[Completion]("elicitation/complete")
