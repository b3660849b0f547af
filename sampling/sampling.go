// Package sampling lets an MCP server ask the host's model for a completion (MCP's
// sampling/createMessage). A model plugin provides a [Sampler] in a layer of the scope tree
// with [Provide]; an MCP client whose scope sees one (or an [Offer]) advertises the sampling
// capability and passes the server's requests to it with [Sample], looking the sampler up
// when the request arrives. Without a sampler or an offer the capability is not advertised,
// so servers do not ask.
//
// A request caused by a call whose context carries a sampler ([WithSampler]) — a gateway's
// downstream session — goes to that sampler first; when it passes ([ErrPass]) the scoped
// samplers answer. With several samplers visible the first by name that does not pass
// answers (an offer always passes).
//
// Sampling is deprecated as of MCP 2026-07-28 (SEP-2577) and still used by servers.
package sampling

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
)

// ErrPass is returned by a sampler for a request it does not take.
var ErrPass = errors.New("sampling: sampler passes")

// ErrNoSampler is the error of a request nobody answered.
var ErrNoSampler = errors.New("sampling: no sampler")

// Request is one sampling/createMessage from a server. It is a plain value; samplers must
// not modify it (Params is the SDK's).
type Request struct {
	// Server is the serverName of the MCP client the request came through; Scope the
	// client's scope.
	Server string
	Scope  *ctx.Scope
	// Params are the request's messages, preferences, system prompt and limits.
	Params *mcp.CreateMessageParams //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
	// Call is the context of the tool call or resource read that caused the request, when
	// the client could tell (nil otherwise).
	Call context.Context
}

// Sampler answers sampling requests. Implementations must be safe for concurrent use and
// return when cx ends.
type Sampler interface {
	CreateMessage(cx context.Context, r *Request) (*mcp.CreateMessageResult, error) //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
}

// Func adapts a function to a [Sampler].
type Func func(cx context.Context, r *Request) (*mcp.CreateMessageResult, error) //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)

// CreateMessage calls f.
func (f Func) CreateMessage(cx context.Context, r *Request) (*mcp.CreateMessageResult, error) { //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
	return f(cx, r)
}

var samplers = ctx.NewTreeLayers[Sampler]("sampler")

// Provide makes s the sampler of the MCP clients in c's layer and below, as an effect of c.
// [ChangedEvent] is emitted from c when it comes and when it goes.
func Provide(c *ctx.Context, name string, s Sampler) (ctx.Disposer, error) {
	if s == nil {
		return nil, fmt.Errorf("sampling: sampler %q is nil", name)
	}
	return samplers.AddAnnounced(c, name, s, ChangedEvent)
}

// Offer declares, in c's layer, that the sampling requests of the MCP clients in c's layer
// and below will be answered, although no sampler that answers them may be provided yet:
// one provided later (the agent's, once its model loads), or a call's own ([WithSampler]:
// an agent session's, a gateway's downstream session's). The clients then declare sampling
// when they connect ([Available]); a request nobody answers when it arrives fails with
// [ErrNoSampler]. The offer is an effect of c, like [Provide]'s sampler.
func Offer(c *ctx.Context, name string) (ctx.Disposer, error) {
	return Provide(c, name, offer)
}

// OfferQuietly is [Offer] announced when the caller says: the offer is in place when it
// returns, and [ChangedEvent] is emitted when announce is called (its going is announced as
// Offer's is). It is for offers of several kinds made as one step (gateway.Offer:
// elicitation and sampling): with all of them in place before any is announced, a client
// connected before them reconnects once, declaring them all.
func OfferQuietly(c *ctx.Context, name string) (_ ctx.Disposer, announce func(), _ error) {
	return samplers.AddAnnouncedLater(c, name, offer, ChangedEvent)
}

// offer is what Offer provides: a sampler that passes every request.
var offer Sampler = Func(func(context.Context, *Request) (*mcp.CreateMessageResult, error) { //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
	return nil, ErrPass
})

// Change is a sampler provided or gone (ChangedEvent): its name and the layer it is in. It
// is a plain value.
type Change = ctx.LayerChange

// ChangedEvent is emitted from the providing context when a sampler (or an [Offer]) is
// provided and when it goes. An MCP client connected before a sampler came listens, and
// reconnects to declare sampling. Listeners run on the providing goroutine and must return
// quickly.
var ChangedEvent = ctx.NewEvent[Change]("sampling/changed")

// Available reports whether a sampler (or an offer) is visible from c (the capability is
// then advertised).
func Available(c *ctx.Context) bool {
	return len(samplers.In(c).Visible(c.Scope())) > 0
}

type directedKey struct{}

// WithSampler returns a context for a call whose sampling requests go to s first.
func WithSampler(pcx context.Context, s Sampler) context.Context {
	return context.WithValue(pcx, directedKey{}, s)
}

// Sample passes r to the call's sampler (WithSampler on r.Call), else to the samplers
// visible from c, by name, until one does not pass (ErrPass). It fails with ErrNoSampler
// when there is none, or when every sampler passed.
func Sample(cx context.Context, c *ctx.Context, r *Request) (*mcp.CreateMessageResult, error) { //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
	if r.Call != nil {
		if d, ok := r.Call.Value(directedKey{}).(Sampler); ok {
			res, err := create(cx, d, r)
			if !errors.Is(err, ErrPass) {
				return res, err
			}
		}
	}
	for _, e := range samplers.In(c).Visible(c.Scope()) {
		res, err := create(cx, e.Value, r)
		if !errors.Is(err, ErrPass) {
			return res, err
		}
	}
	return nil, ErrNoSampler
}

// create asks s; a panic in s (a sampler's bug) fails this request only.
func create(cx context.Context, s Sampler, r *Request) (res *mcp.CreateMessageResult, err error) { //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
	err = ctx.Safely(func() (err error) {
		res, err = s.CreateMessage(cx, r)
		return err
	})
	return res, err
}
