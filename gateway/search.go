package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/plugins/toolregistry/deferral"
	"github.com/cordisgo/harness/toolsearch"
)

// PathSearch is the search route over HTTP: the aggregated route's tools behind a search.
const PathSearch = "/mcp/search"

// CallToolName is the search route's entry for calling a found tool by name, for clients
// that do not refresh their tool list when the server says it changed.
const CallToolName = deferral.CallToolName

// searchOrphanAge is how long a search route's server may go without a session before it
// is forgotten: a server is made for a session that has not connected yet.
const searchOrphanAge = time.Minute

// searchRoute serves the search-then-call surface: each downstream session gets a server of
// its own, listing tool_search, call_tool and the tools that need no search (those of no MCP
// server, such as the shared resource tools); the tools a session's searches find are added
// to its server with their real schemas, which tells the client (tools/list_changed).
// Calls go through the registry, as on the aggregated route.
type searchRoute struct {
	g *Gateway
	d *deferral.Deferrer
	worker

	mu       sync.Mutex
	sessions map[*searchSession]struct{}
}

// searchSession is one downstream session's server and what it shows.
type searchSession struct {
	srv   *mcp.Server
	born  time.Time
	mu    sync.Mutex
	shown map[string]string // registry tool shown → fingerprint
}

// searchSessionKey carries the searchSession of a tool_search call to the Deferrer.
type searchSessionKey struct{}

func (g *Gateway) newSearchRoute() *searchRoute {
	r := &searchRoute{g: g, sessions: map[*searchSession]struct{}{}}
	// Everything is behind the search on this route, whatever the fleet's size: a share of
	// the smallest context window defers as soon as there is one tool.
	r.d = deferral.New(g.reg, deferral.Options{
		ContextShare: math.SmallestNonzeroFloat64,
		MaxTools:     -1,
		Session: func(cx context.Context) (any, bool) {
			s, ok := cx.Value(searchSessionKey{}).(*searchSession)
			return s, ok
		},
		Instructions: func(server string) string { return mcpclient.InstructionsOf(g.c, server) },
	})
	r.worker = g.newWorker("search", r.sync)
	return r
}

// Search returns a new server of the search route, for one downstream session (HTTP gives
// each new session its own; serve --stdio runs one). Its tools are tool_search, call_tool,
// the tools of no MCP server, and the tools its searches found.
func (g *Gateway) Search() *mcp.Server {
	g.mu.Lock()
	if g.search == nil {
		g.search = g.newSearchRoute()
	}
	r := g.search
	g.mu.Unlock()
	return r.newSession()
}

func (r *searchRoute) newSession() *mcp.Server {
	s := &searchSession{born: time.Now(), shown: map[string]string{}}
	impl := r.g.opts.Implementation
	if impl == nil {
		impl = &mcp.Implementation{Name: "harness-gateway", Version: "1"}
	}
	s.srv = mcp.NewServer(impl, &mcp.ServerOptions{
		Logger: r.g.log,
		Instructions: "The tools of this gateway's MCP servers are behind a search. Call " + deferral.SearchToolName +
			" with what you want to do: the tools it finds are added to your tool list with their schemas " +
			"(the server sends notifications/tools/list_changed). If your tool list does not change, call a found tool through " +
			CallToolName + ` with {"name": "<tool>", "arguments": {...}}.`,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}, Logging: &mcp.LoggingCapabilities{}}, //nolint:staticcheck // SEP-2577: server logs stay for peers on protocol versions that have them (2025-11-25)
	})
	s.srv.AddReceivingMiddleware(r.g.inFlight(PathSearch)) // a DELETE or a killed client cancels its calls (lifecycle.go)
	s.srv.AddSendingMiddleware(keepAnswers)
	r.g.tasks.Serve(s.srv)
	search := toolOf(toolregistry.Info{Name: deferral.SearchToolName, Description: r.d.Tool().Description +
		" If your tool list does not show them, call them through " + CallToolName + ".", Parameters: r.d.Tool().Parameters})
	s.srv.AddTool(search, func(cx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return r.searchTool(cx, s, req), nil
	})
	s.srv.AddTool(&mcp.Tool{Name: CallToolName,
		Description: "Call a tool that " + deferral.SearchToolName + " found, by the name it returned, with its arguments " +
			"(for clients whose tool list does not show the found tools).",
		InputSchema: r.d.CallTool().Parameters}, r.callEntry)
	r.mu.Lock()
	r.pruneLocked()
	r.sessions[s] = struct{}{}
	r.mu.Unlock()
	r.syncSession(s)
	return s.srv
}

// pruneLocked forgets the servers whose session has ended (or never came).
func (r *searchRoute) pruneLocked() {
	for s := range r.sessions {
		if time.Since(s.born) < searchOrphanAge {
			continue
		}
		if !hasSessions(s.srv) {
			delete(r.sessions, s)
			r.d.End(s)
		}
	}
}

// searchTool runs tool_search for session s: the Deferrer ranks the tools and records the
// hits as s's loaded tools; they are added to s's server before the result is returned, and
// the lazy servers among their owners are started meanwhile.
func (r *searchRoute) searchTool(cx context.Context, s *searchSession, req *mcp.CallToolRequest) *mcp.CallToolResult {
	call := &toolregistry.Call{ID: "gateway-search", Tool: deferral.SearchToolName, Args: req.Params.Arguments, Caller: r.g.c}
	if len(call.Args) == 0 {
		call.Args = json.RawMessage(`{}`)
	}
	res, err := r.d.Tool().Execute(context.WithValue(cx, searchSessionKey{}, s), call)
	if err != nil {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "Error: " + err.Error()}}}
	}
	r.syncSession(s)
	r.startServers(res)
	out := r.g.result(res, nil)
	if !res.IsError && strings.Contains(res.Content[0].Text, "found and loaded") {
		out.Content = append(out.Content, &mcp.TextContent{Text: "If your tool list does not show them, call them through " +
			CallToolName + ` with {"name": "<tool>", "arguments": {...}}.`})
	}
	return out
}

// startServers starts, in the background, the lazy servers of the tools a search found, so
// that a call finds them ready.
func (r *searchRoute) startServers(res *toolregistry.Result) {
	var found struct {
		Tools []toolsearch.Hit `json:"tools"`
	}
	if json.Unmarshal(res.Structured, &found) != nil {
		return
	}
	seen := map[string]bool{}
	for _, h := range found.Tools {
		if h.Server == "" || seen[h.Server] {
			continue
		}
		seen[h.Server] = true
		u, ok := mcpclient.LookupUpstream(r.g.c, h.Server)
		if !ok || !u.Lazy() {
			continue
		}
		_, _ = r.g.life.Go("gateway:start:"+h.Server, func(runcx context.Context) error {
			cx, cancel := context.WithTimeout(runcx, 2*time.Minute)
			defer cancel()
			if err := u.Start(cx); err != nil && runcx.Err() == nil {
				r.g.log.Debug("starting a found tool's lazy server failed; its first call says why", "server", h.Server, "err", err)
			}
			return nil
		}) // fails only when the gateway is closed
	}
}

// callEntry is call_tool: the named tool through the registry, as if called directly.
func (r *searchRoute) callEntry(cx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	// As the agent reads call_tool (deferral.ParseCall): arguments given as a JSON string are
	// taken as the object, and the search's own tools are called directly.
	name, args, err := deferral.ParseCall(req.Params.Arguments)
	if err != nil {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
			Text: fmt.Sprintf(`Error: %v; %s takes {"name": "<tool>", "arguments": {...}} (name: a tool %s found)`, err, CallToolName, deferral.SearchToolName)}}}, nil
	}
	if in, ok := r.g.reg.Lookup(r.g.c, name); ok && !offered(in) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
			Text: fmt.Sprintf("Error: %s is the agent's own tool, for its models: the gateway does not offer it", name)}}}, nil
	}
	p := &mcp.CallToolParamsRaw{Meta: req.Params.Meta, Name: name, Arguments: args}
	return r.g.execute(cx, r.g.c, req.Session, p, name)
}

// callLoaded is the handler of a found tool shown with its own schema.
func (r *searchRoute) callLoaded(cx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return r.g.execute(cx, r.g.c, req.Session, req.Params, req.Params.Name)
}

// syncSession brings s's server in line with what s should show: the tools that need no
// search and the tools its searches found, as the registry has them now.
func (r *searchRoute) syncSession(s *searchSession) {
	visible := slices.DeleteFunc(r.g.reg.List(r.g.c), func(in toolregistry.Info) bool { return !offered(in) })
	chosen := r.d.Choose(s, visible, 1)
	infos := chosen[:0:0]
	for _, in := range chosen {
		if in.Name != deferral.SearchToolName && in.Name != CallToolName {
			infos = append(infos, in)
		}
	}
	syncShownTools(s.srv, &s.mu, s.shown, infos, r.callLoaded)
}

// sync is the route's worker: every session's server follows the registry.
func (r *searchRoute) sync(context.Context) {
	r.mu.Lock()
	r.pruneLocked()
	sessions := make([]*searchSession, 0, len(r.sessions))
	for s := range r.sessions {
		sessions = append(sessions, s)
	}
	r.mu.Unlock()
	for _, s := range sessions {
		r.syncSession(s)
	}
}

func (r *searchRoute) mcpServer() *mcp.Server { return nil }

func (r *searchRoute) mcpServers() []*mcp.Server {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*mcp.Server, 0, len(r.sessions))
	for s := range r.sessions {
		out = append(out, s.srv)
	}
	return out
}

func (r *searchRoute) serves(string) bool { return false }
