package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/gateway/access"
	"github.com/cordisgo/harness/gateway/audit"
	"github.com/cordisgo/harness/internal/redact"
	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// A team's gateway: who calls, what they may do, and what they did.
//
//   - With [HTTPOptions.Access], every request carries a bearer token of the team's identity
//     provider, checked by the go-sdk's auth.RequireBearerToken with the policy's verifier
//     (audience: this gateway), and the gateway serves its protected-resource metadata.
//     Each request's context carries the person the token names (access.PersonFrom).
//   - The access rules apply before a call, on the tool registry's policy chain
//     (toolregistry.Policy, the chain the agent's permissions use; the call's
//     ExecOptions.Session is the person): a call the rules refuse
//     is denied there, and its result says why. Lists are filtered too: a person sees only
//     the tools they may call, and the resources and prompts of the servers they may use.
//   - Every tool call is audited ([Options.Audit]): who, route, server, tool, outcome,
//     duration and the arguments with the values of secret-looking keys masked.

// requestInfo is what the gateway knows of a downstream request, in its context.
type requestInfo struct {
	route  string
	person *access.Person // nil without sign-in
	ss     *mcp.ServerSession
}

type requestKey struct{}

func requestOf(cx context.Context) *requestInfo {
	ri, _ := cx.Value(requestKey{}).(*requestInfo)
	return ri
}

// withRequest returns cx carrying what the gateway knows of the request req of route: its
// route, its session, and with access rules, its person.
func (g *Gateway) withRequest(cx context.Context, route string, ss *mcp.ServerSession, req mcp.Request) context.Context {
	ri := &requestInfo{route: route, ss: ss}
	if pol := g.access.Load(); pol != nil {
		if ex := req.GetExtra(); ex != nil && ex.TokenInfo != nil {
			who := pol.Person(ex.TokenInfo)
			ri.person = &who
			cx = access.WithPerson(cx, who)
		}
	}
	return context.WithValue(cx, requestKey{}, ri)
}

// useAccess makes pol the gateway's access rules: the policy listener is registered once.
func (g *Gateway) useAccess(pol *access.Policy) error {
	if g.access.Swap(pol) != nil {
		return nil
	}
	_, err := toolregistry.Policy.On(g.life, g.decide)
	return err
}

// decide is the gateway's listener on the tool registry's policy chain: a call made for a
// signed-in person is refused when the access rules do not let them call the tool.
func (g *Gateway) decide(req *toolregistry.PolicyRequest, next func() (permission.Decision, error)) (permission.Decision, error) {
	pol := g.access.Load()
	who, ok := req.Session.(access.Person)
	if pol == nil || !ok {
		return next()
	}
	server, tool := toolOrigin(req.Tool)
	if d := pol.MayCall(who, server, tool); !d.Allowed {
		return permission.Decision{Action: permission.Deny, Reason: d.Reason}, nil
	}
	return next()
}

// toolOrigin names a registry tool as the access rules and the audit do: its MCP server and
// the tool's own name there, or access.Builtin and its name.
func toolOrigin(in toolregistry.Info) (server, tool string) {
	if s := in.Meta["server"]; s != "" {
		if t := in.Meta["mcpTool"]; t != "" {
			return s, t
		}
	}
	return access.Builtin, in.Name
}

// screen applies the access rules to one request before it is served, and to the lists it
// answers: tools a person may not call, and the resources, templates and prompts of servers
// they may not use, are not listed; a read, prompt, completion or subscription of such a
// server is refused.
func (g *Gateway) screen(cx context.Context, route, method string, req mcp.Request, next func() (mcp.Result, error)) (mcp.Result, error) {
	pol := g.access.Load()
	ri := requestOf(cx)
	if pol == nil || ri == nil || ri.person == nil {
		return next()
	}
	who := *ri.person
	serverOf := g.itemServer(route)
	mayUse := func(server string) error {
		if server == "" {
			return nil
		}
		if d := pol.MayUseServer(who, server); !d.Allowed {
			return fmt.Errorf("access denied: %s", d.Reason)
		}
		return nil
	}
	switch p := req.GetParams().(type) {
	case *mcp.ReadResourceParams:
		if err := mayUse(serverOf("resource", p.URI)); err != nil {
			return nil, err
		}
	case *mcp.SubscribeParams:
		if err := mayUse(serverOf("resource", p.URI)); err != nil {
			return nil, err
		}
	case *mcp.GetPromptParams:
		if err := mayUse(serverOf("prompt", p.Name)); err != nil {
			return nil, err
		}
	case *mcp.CompleteParams:
		if p.Ref != nil {
			kind, key := "prompt", p.Ref.Name
			if p.Ref.Type == "ref/resource" {
				kind, key = "template", p.Ref.URI
			}
			if err := mayUse(serverOf(kind, key)); err != nil {
				return nil, err
			}
		}
	}
	res, err := next()
	if err != nil {
		return res, err
	}
	switch r := res.(type) {
	case *mcp.ListToolsResult:
		out := *r
		out.Tools = kept(r.Tools, func(t *mcp.Tool) bool {
			server, tool := g.toolOn(route, t.Name)
			return pol.MayCall(who, server, tool).Allowed
		})
		return &out, nil
	case *mcp.ListResourcesResult:
		out := *r
		out.Resources = kept(r.Resources, func(x *mcp.Resource) bool { return mayUse(serverOf("resource", x.URI)) == nil })
		return &out, nil
	case *mcp.ListResourceTemplatesResult:
		out := *r
		out.ResourceTemplates = kept(r.ResourceTemplates, func(x *mcp.ResourceTemplate) bool { return mayUse(serverOf("template", x.URITemplate)) == nil })
		return &out, nil
	case *mcp.ListPromptsResult:
		out := *r
		out.Prompts = kept(r.Prompts, func(x *mcp.Prompt) bool { return mayUse(serverOf("prompt", x.Name)) == nil })
		return &out, nil
	}
	return res, err
}

// kept returns the items of xs that keep keeps, in order (nil when none): a list with what
// the rules hide left out.
func kept[T any](xs []T, keep func(T) bool) []T {
	var out []T
	for _, x := range xs {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}

// toolOn names the tool a route lists as name: on a per-server route, that server's tool;
// elsewhere the registry's tool of that public name.
func (g *Gateway) toolOn(route, name string) (server, tool string) {
	if s, ok := strings.CutPrefix(route, PathServers); ok {
		return s, name
	}
	if in, ok := g.reg.Lookup(g.c, name); ok {
		return toolOrigin(in)
	}
	return access.Builtin, name
}

// itemServer returns the function that names the server of a resource, template or prompt
// of route ("" when the route does not know it).
func (g *Gateway) itemServer(route string) func(kind, key string) string {
	if s, ok := strings.CutPrefix(route, PathServers); ok {
		return func(string, string) string { return s }
	}
	var r *scopeRoute
	g.mu.Lock()
	switch {
	case route == PathAggregated || route == PathSearch:
		r = g.agg
	case strings.HasPrefix(route, PathAgents):
		r = g.agents[route[len(PathAgents):]]
	}
	g.mu.Unlock()
	return func(kind, key string) string {
		if r == nil {
			return ""
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		switch kind {
		case "resource":
			return r.resources[key]
		case "template":
			return r.templates[key]
		default:
			return r.prompts[key].server
		}
	}
}

// callTool runs the registry tool public for a downstream call and audits it.
func (g *Gateway) callTool(cx context.Context, caller *ctx.Context, public string, args json.RawMessage) (*toolregistry.Result, error) {
	start := time.Now()
	var opts toolregistry.ExecOptions
	if ri := requestOf(cx); ri != nil && ri.person != nil {
		opts.Session = *ri.person // who the call is made for, for the policy chain (decide)
	}
	res, err := g.reg.Execute(cx, caller, public, args, opts)
	if g.audit != nil {
		g.record(cx, caller, public, args, start, err)
	}
	return res, err
}

// record appends the audit entry of one call.
func (g *Gateway) record(cx context.Context, caller *ctx.Context, public string, args json.RawMessage, start time.Time, err error) {
	e := audit.Entry{Time: start.UTC(), Outcome: audit.OK, DurationMs: time.Since(start).Milliseconds()}
	if in, ok := g.reg.Lookup(caller, public); ok {
		e.Server, e.Tool = toolOrigin(in)
	} else {
		e.Server, e.Tool = access.Builtin, public
	}
	if masked := redact.JSON(string(args)); json.Valid([]byte(masked)) {
		e.Args = json.RawMessage(masked)
	} else if len(args) > 0 {
		e.Args, _ = json.Marshal("[not JSON]")
	}
	if ri := requestOf(cx); ri != nil {
		e.Route = ri.route
		if ri.person != nil {
			e.Person, e.Groups = ri.person.ID, ri.person.Groups
		}
		if ri.ss != nil {
			e.Session = shortID(ri.ss.ID())
		}
	}
	if g.repl != nil {
		e.Replica = g.repl.name
	}
	var te *toolregistry.ToolError
	if errors.As(err, &te) {
		e.Outcome, e.Error = string(te.Code), te.Msg
	} else if err != nil {
		e.Outcome, e.Error = "failed", err.Error()
	}
	g.audit.Add(e)
}
