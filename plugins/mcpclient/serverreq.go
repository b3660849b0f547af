package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/plugins/elicitation"
	"github.com/cordisgo/harness/plugins/sampling"
)

// originKey carries the identity of whoever made a call (WithOrigin).
type originKey struct{}

// WithOrigin returns a context for tool calls and resource reads made on behalf of origin (a
// gateway's downstream session, say; any comparable value that identifies it). A server may
// send requests of its own while a call is in flight (elicitation, sampling, roots/list), and
// MCP does not say which call caused them: the client passes the caller's context to the
// elicitation responders and the sampler ([elicitation.Request].Call) when exactly one
// request is in flight, or when every request in flight has the same origin. Otherwise the
// request is not attributed to any call (Call is nil), so it can never reach another
// caller's surface.
func WithOrigin(parent context.Context, origin any) context.Context {
	return context.WithValue(parent, originKey{}, origin)
}

// cause returns the context of the call that caused a server request on g, or nil when it
// cannot be told.
func (g *generation) cause() context.Context {
	callers := g.watch.callers()
	if len(callers) == 0 {
		return nil
	}
	first := callers[0]
	if len(callers) == 1 {
		return first
	}
	o := first.Value(originKey{})
	if o == nil {
		return nil
	}
	for _, c := range callers[1:] {
		if c.Value(originKey{}) != o {
			return nil
		}
	}
	return first
}

// serverRequests adds to a generation's client options the handlers of the requests a server
// may send, with the capabilities that announce them: elicitation when a responder is
// visible from the client's scope (with its modes), sampling when a sampler is, roots when
// the configuration lists some. It returns what to do with the new client (add the roots).
func (s *supervisor) serverRequests(g *generation, co *mcp.ClientOptions) func(*mcp.Client) {
	caps := co.Capabilities
	if caps == nil {
		caps = &mcp.ClientCapabilities{}
		co.Capabilities = caps
	}
	if modes := elicitation.Modes(s.c); len(modes) > 0 {
		caps.Elicitation = &mcp.ElicitationCapabilities{}
		for _, m := range modes {
			switch m {
			case elicitation.ModeForm:
				caps.Elicitation.Form = &mcp.FormElicitationCapabilities{}
			case elicitation.ModeURL:
				caps.Elicitation.URL = &mcp.URLElicitationCapabilities{}
			}
		}
		co.ElicitationHandler = func(cx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return s.elicit(cx, g, r.Params)
		}
		co.ElicitationCompleteHandler = func(_ context.Context, r *mcp.ElicitationCompleteNotificationRequest) {
			if r.Params == nil {
				return
			}
			err := elicitation.CompleteEvent.Emit(s.c, elicitation.Completion{Server: s.cfg.ServerName, Scope: s.c.Scope(), ID: r.Params.ElicitationID})
			if err != nil {
				s.log.Warn("elicitation completion listener failed", "err", err)
			}
		}
	}
	if sampling.Available(s.c) {
		caps.Sampling = &mcp.SamplingCapabilities{}
		co.CreateMessageHandler = func(cx context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return s.sample(cx, g, r.Params)
		}
	}
	if len(s.cfg.Roots) == 0 {
		return nil
	}
	caps.RootsV2 = &mcp.RootCapabilities{ListChanged: true}
	roots := make([]*mcp.Root, 0, len(s.cfg.Roots))
	for _, r := range s.cfg.Roots {
		uri, err := rootURI(r) // validated: cannot fail but for a vanished home directory
		if err != nil {
			s.log.Warn("root skipped", "root", r, "err", err)
			continue
		}
		roots = append(roots, &mcp.Root{URI: uri})
	}
	return func(c *mcp.Client) { c.AddRoots(roots...) }
}

// elicit answers one elicitation/create through the elicitation service. The idle deadlines
// of the generation's calls are held meanwhile; elicitationTimeoutMs bounds the wait, and
// its expiry is reported as "cancel".
func (s *supervisor) elicit(cx context.Context, g *generation, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	req := &elicitation.Request{Server: s.cfg.ServerName, Scope: s.c.Scope(), Mode: elicitation.ModeForm,
		Message: s.scrub.Replace(p.Message), URL: p.URL, ID: p.ElicitationID, Call: g.cause()}
	if p.Mode == "url" || p.Mode == "" && p.URL != "" {
		req.Mode = elicitation.ModeURL
	} else {
		form, err := elicitation.ParseForm(p.RequestedSchema)
		if err != nil {
			return nil, fmt.Errorf("mcp server %q: elicitation: %w", s.cfg.ServerName, err)
		}
		req.Form = form
	}
	g.watch.hold()
	defer g.watch.release()
	timeout := s.cfg.ElicitationTimeout()
	ecx, cancel := context.WithTimeoutCause(cx, timeout, errElicitationTimeout)
	defer cancel()
	started := time.Now()
	res, err := elicitation.Elicit(ecx, s.c, req)
	switch {
	case errors.Is(context.Cause(ecx), errElicitationTimeout):
		s.log.Warn("elicitation timed out; reported as cancel", "mode", string(req.Mode), "timeout", timeout)
		return &mcp.ElicitResult{Action: string(elicitation.Cancel)}, nil
	case cx.Err() != nil:
		return nil, context.Cause(cx)
	case err != nil && res == nil:
		return nil, err
	case err != nil:
		s.log.Info("elicitation declined: nobody answered", "mode", string(req.Mode), "err", err)
	default:
		s.log.Info("elicitation answered", "mode", string(req.Mode), "action", string(res.Action), "elapsed", time.Since(started).Round(time.Millisecond))
	}
	return &mcp.ElicitResult{Action: string(res.Action), Content: res.Content}, nil
}

var errElicitationTimeout = errors.New("no answer within elicitationTimeoutMs")

// sample answers one sampling/createMessage through the sampling service, holding the idle
// deadlines of the generation's calls meanwhile.
func (s *supervisor) sample(cx context.Context, g *generation, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	g.watch.hold()
	defer g.watch.release()
	res, err := sampling.Sample(cx, s.c, &sampling.Request{Server: s.cfg.ServerName, Scope: s.c.Scope(), Params: p, Call: g.cause()})
	if err != nil {
		return nil, fmt.Errorf("mcp server %q: sampling/createMessage: %w", s.cfg.ServerName, err)
	}
	return res, nil
}
