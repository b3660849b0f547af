// Package deferral chooses the tool definitions of a model's requests when a fleet has
// too many to send them all: below a threshold every visible tool, above it a few tools
// plus tool_search, which ranks the deferred ones ([toolsearch]) and loads what it finds
// into the caller's session, or returns them to be called through call_tool. The agent
// and the gateway each keep a [Deferrer] over their registry.
//
// It stands between the registry and the ranking: [toolsearch] ranks plain data and knows
// no registry; [Servers] turns the registry's listings into that data.
//
// # Concurrency
//
// A [Deferrer] is safe for concurrent use; the package's functions are too.
package deferral

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/toolsearch"
)

// SearchToolName is the name of the tool_search tool.
const SearchToolName = "tool_search"

// CallToolName is the name of the tool through which the model calls the tools a search
// found, when they are called through one stable tool ([CallsProxy]).
const CallToolName = "call_tool"

// How the model calls the tools a search found ([Options].Calls).
const (
	// CallsProxy: through call_tool ({"name", "arguments"}), with the schemas in the
	// search's result. The request's tools never change, so a search costs the bytes of its
	// result and nothing of the provider's cached prefix.
	CallsProxy = "proxy"
	// CallsDefinitions: the found tools' definitions are appended to the request's tools
	// and called directly. The tools precede the messages, so the request after a search
	// misses the provider's prefix cache for the whole conversation.
	CallsDefinitions = "definitions"
)

// The defaults of [Options].
const (
	// DefaultContextShare: defer when the definitions would take more than 10 % of the
	// model's context window (Claude Code's auto mode uses the same share).
	DefaultContextShare = 0.10
	// DefaultMaxTools: defer when more than 100 tools are visible, whatever their size.
	DefaultMaxTools = 100
	// DefaultSearchLimit is the number of hits of a tool_search call without "limit".
	DefaultSearchLimit = 5
	// MaxSearchLimit caps "limit".
	MaxSearchLimit = 10
	// DefaultSchemaHits is how many of a search's hits carry their schema in the result.
	DefaultSchemaHits = 3
	// BytesPerToken is the estimate the size rule uses (JSON schemas run at 3–4 bytes a token).
	BytesPerToken = 4
)

// Options say when a request's tool definitions are deferred and which tools are
// never deferred. The zero value takes the defaults. It is a plain value.
type Options struct {
	// ContextShare defers when the visible definitions' estimated tokens exceed this share of
	// the model's context window (0: [DefaultContextShare]; negative: never by size; the
	// rule is skipped when the window is unknown).
	ContextShare float64 `json:"contextShare,omitempty"`
	// MaxTools defers when more tools than this are visible (0: [DefaultMaxTools]; negative:
	// never by count).
	MaxTools int `json:"maxTools,omitempty"`
	// AlwaysLoad names tools that are sent on every request even when deferring: a server
	// name (all its tools), "server/tool" with the tool's raw name, or a public name; each
	// may be a path.Match pattern ("github/*_issue"). Tools that belong to no MCP server
	// (no "server" in their Meta) and tools whose Meta has "alwaysLoad": "true" are always
	// loaded too.
	AlwaysLoad []string `json:"alwaysLoad,omitempty"`
	// Calls is how the model calls the tools a search found: [CallsProxy] ("proxy": through
	// call_tool, the request's tools unchanged; the agent's default) or [CallsDefinitions]
	// ("definitions", or "": appended to the request's tools). See docs/tool-search.md,
	// "The cache".
	Calls string `json:"calls,omitempty"`
	// Session returns the session a tool_search call runs for, from the call's context (the
	// agent puts it there). Without it, or when it reports none, a search loads nothing.
	Session func(context.Context) (any, bool) `json:"-"`
	// Embeddings, when set, adds the embeddings stage to tool_search (see [toolsearch.Semantic]): the
	// deferred tools are embedded when the index is built, each query when it is searched.
	// Off by default; when the endpoint fails, the search falls back to the lexical ranking.
	Embeddings *toolsearch.EmbeddingsOptions `json:"embeddings,omitempty"`
	// Instructions returns the instructions of an MCP server (its initialize result), which
	// tool_search ranks with the server's tools at a low weight; nil, or "", for none. It is
	// called for each server of the deferred tools whenever the index may have to be built
	// again, so it should be cheap (a lookup).
	Instructions func(server string) string `json:"-"`
}

func (o *Options) share() float64 {
	if o.ContextShare == 0 {
		return DefaultContextShare
	}
	return o.ContextShare
}

func (o *Options) proxy() bool { return o.Calls == CallsProxy }

// special reports whether name is one of the deferrer's own tools.
func special(name string) bool { return name == SearchToolName || name == CallToolName }

func (o *Options) maxTools() int {
	if o.MaxTools == 0 {
		return DefaultMaxTools
	}
	return o.MaxTools
}

// Deferrer chooses the tool definitions of an agent's model requests: below the threshold
// every visible tool; above it the always-loaded tools, the tool_search tool and, appended
// in the order they were found, the tools the session's searches found. It keeps per
// session the tools found so far.
//
// A Deferrer is safe for concurrent use: Choose and tool_search calls of several sessions
// may run at once.
type Deferrer struct {
	opts Options
	reg  *toolregistry.Registry

	mu       sync.Mutex
	sessions map[any]*deferState
	cacheKey uint64
	cacheIx  *toolsearch.Index
	// the embeddings stage (opts.Embeddings): the tools' vectors kept across rebuilds, and
	// the Semantic of cacheIx (nil until built, or after its embedding failed)
	embCache toolsearch.EmbeddingCache
	cacheSem *toolsearch.Semantic
}

// deferState is one session's loaded tools, by public name, in the order found.
type deferState struct {
	loaded []string
	has    map[string]bool
}

// New returns a Deferrer for the tools of reg (the registry whose tools the agent
// sees; its tool_search tool lists them from the caller's scope).
func New(reg *toolregistry.Registry, o Options) *Deferrer {
	return &Deferrer{opts: o, reg: reg, sessions: map[any]*deferState{}}
}

// Servers groups registry listings into the servers [toolsearch.New] indexes: a tool whose
// Meta has "server" (as the MCP client sets it, with "mcpTool" its raw name) joins that
// server; other tools form the server "". instructions maps server names to their
// instructions (may be nil). The servers come out sorted by name, their tools in the
// listing's order.
func Servers(tools []toolregistry.Info, instructions map[string]string) []toolsearch.Server {
	idx := map[string]int{}
	var out []toolsearch.Server
	for _, info := range tools {
		server := info.Meta["server"]
		raw := info.Meta["mcpTool"]
		if raw == "" {
			raw = info.Name
		}
		i, ok := idx[server]
		if !ok {
			i = len(out)
			idx[server] = i
			out = append(out, toolsearch.Server{Name: server, Instructions: instructions[server]})
		}
		out[i].Tools = append(out[i].Tools, toolsearch.Tool{Name: raw, PublicName: info.Name, Title: info.Meta["title"],
			Description: info.Description, InputSchema: info.Parameters})
	}
	slices.SortFunc(out, func(a, b toolsearch.Server) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// alwaysLoaded reports whether t is sent even when deferring.
func (d *Deferrer) alwaysLoaded(t toolregistry.Info) bool {
	server, ok := t.Meta["server"]
	if !ok || t.Meta["alwaysLoad"] == "true" {
		return true
	}
	raw := t.Meta["mcpTool"]
	for _, p := range d.opts.AlwaysLoad {
		for _, name := range []string{server, server + "/" + raw, t.Name} {
			if m, _ := path.Match(p, name); m {
				return true
			}
		}
	}
	return false
}

// Exceeds reports whether tools (the visible definitions, tool_search excluded) are over
// the threshold for a model with the given context window (tokens; 0: unknown).
func (d *Deferrer) Exceeds(tools []toolregistry.Info, contextWindow int) bool {
	n := 0
	size := 0
	for _, t := range tools {
		if special(t.Name) {
			continue
		}
		n++
		size += DefinitionBytes(t)
	}
	if m := d.opts.maxTools(); m > 0 && n > m {
		return true
	}
	share := d.opts.share()
	return share > 0 && contextWindow > 0 && float64(size)/BytesPerToken > share*float64(contextWindow)
}

// DefinitionBytes estimates the bytes one tool's definition takes in a request: its name,
// description and schema plus the JSON around them.
func DefinitionBytes(t toolregistry.Info) int {
	return len(t.Name) + len(t.Description) + len(t.Parameters) + 64
}

// Choose returns the tools whose definitions go into session's next request, from visible
// (the registry's listing at the agent's scope, sorted by name) and the model's context
// window. Below the threshold it is visible without tool_search and call_tool; above it,
// the always-loaded tools in visible's order, then tool_search, then call_tool
// ([CallsProxy]) or the tools session's searches found, in the order found (those no longer
// visible left out; [CallsDefinitions]). So the list never changes ([CallsProxy]) or only
// grows at its end while nothing else changes, and the request prefix stays byte-stable.
// The returned slice is new; its elements are visible's.
func (d *Deferrer) Choose(session any, visible []toolregistry.Info, contextWindow int) []toolregistry.Info {
	out := make([]toolregistry.Info, 0, len(visible))
	var search, proxy *toolregistry.Info
	if !d.Exceeds(visible, contextWindow) {
		for _, t := range visible {
			if !special(t.Name) {
				out = append(out, t)
			}
		}
		return out
	}
	byName := make(map[string]int, len(visible))
	for i, t := range visible {
		switch t.Name {
		case SearchToolName:
			search = &visible[i]
			continue
		case CallToolName:
			proxy = &visible[i]
			continue
		}
		if d.alwaysLoaded(t) {
			out = append(out, t)
		} else {
			byName[t.Name] = i
		}
	}
	if search != nil {
		out = append(out, *search)
	}
	if d.opts.proxy() {
		if proxy != nil {
			out = append(out, *proxy)
		}
		return out
	}
	d.mu.Lock()
	st := d.sessions[session]
	var loaded []string
	if st != nil {
		loaded = st.loaded
	}
	d.mu.Unlock()
	for _, name := range loaded {
		if i, ok := byName[name]; ok {
			out = append(out, visible[i])
		}
	}
	return out
}

// Loaded returns the public names of the tools session's searches loaded, in order.
func (d *Deferrer) Loaded(session any) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if st := d.sessions[session]; st != nil {
		return append([]string(nil), st.loaded...)
	}
	return nil
}

// Load appends tools (public names) to session's loaded tools, skipping those already
// loaded. tool_search calls it with its hits.
func (d *Deferrer) Load(session any, names ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	st := d.sessions[session]
	if st == nil {
		st = &deferState{has: map[string]bool{}}
		d.sessions[session] = st
	}
	for _, n := range names {
		if !st.has[n] {
			st.has[n] = true
			st.loaded = append(st.loaded, n)
		}
	}
}

// End forgets session's loaded tools; call it when the session closes.
func (d *Deferrer) End(session any) {
	d.mu.Lock()
	delete(d.sessions, session)
	d.mu.Unlock()
}

// index returns the index over the deferrable tools of visible, rebuilt only when they
// changed.
func (d *Deferrer) index(visible []toolregistry.Info) *toolsearch.Index {
	var h maphash.Hash
	h.SetSeed(seed)
	var tools []toolregistry.Info
	var instructions map[string]string
	for _, t := range visible {
		if special(t.Name) || d.alwaysLoaded(t) {
			continue
		}
		tools = append(tools, t)
		h.WriteString(t.Name)
		h.WriteByte(0)
		h.WriteString(t.Description)
		h.Write(t.Parameters)
		h.WriteByte(0)
		if server := t.Meta["server"]; d.opts.Instructions != nil && server != "" {
			if _, ok := instructions[server]; !ok {
				if instructions == nil {
					instructions = map[string]string{}
				}
				text := d.opts.Instructions(server)
				instructions[server] = text
				h.WriteString(server)
				h.WriteByte(0)
				h.WriteString(text)
				h.WriteByte(0)
			}
		}
	}
	key := h.Sum64()
	d.mu.Lock()
	if d.cacheIx != nil && d.cacheKey == key {
		ix := d.cacheIx
		d.mu.Unlock()
		return ix
	}
	d.mu.Unlock()
	ix := toolsearch.New(Servers(tools, instructions))
	d.mu.Lock()
	d.cacheKey, d.cacheIx = key, ix
	d.mu.Unlock()
	return ix
}

var seed = maphash.MakeSeed()

// semantic returns the embeddings stage over ix when one is configured: built once per
// index (the tools' vectors kept across rebuilds), nil with the error when the endpoint
// failed (the next search tries again).
func (d *Deferrer) semantic(cx context.Context, ix *toolsearch.Index) (*toolsearch.Semantic, error) {
	eo := d.opts.Embeddings
	if eo == nil {
		return nil, nil
	}
	d.mu.Lock()
	if d.cacheSem != nil && d.cacheSem.Index() == ix {
		s := d.cacheSem
		d.mu.Unlock()
		return s, nil
	}
	d.mu.Unlock()
	client := &toolsearch.EmbeddingsClient{BaseURL: eo.BaseURL, Model: eo.Model}
	if eo.APIKeyEnv != "" {
		client.APIKey = os.Getenv(eo.APIKeyEnv)
	}
	s, err := toolsearch.NewSemantic(cx, ix, client, toolsearch.SemanticOptions{Weight: eo.Weight, Cache: &d.embCache})
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.cacheSem = s
	d.mu.Unlock()
	return s, nil
}

// searchArgs are tool_search's arguments.
type searchArgs struct {
	Query   string   `json:"query"`
	Queries []string `json:"queries"`
	Limit   int      `json:"limit"`
	Server  string   `json:"server"`
}

// MaxQueries caps the queries of one tool_search call.
const MaxQueries = 8

// searchSchema is tool_search's input schema.
const searchSchema = `{"type":"object","properties":{` +
	`"query":{"type":"string","description":"What you want to do, in words or tool-name fragments (any language)."},` +
	`"queries":{"type":"array","items":{"type":"string"},"maxItems":8,"description":"Several needs at once, one query each (for example each step of a task); use instead of query."},` +
	`"limit":{"type":"integer","minimum":1,"maximum":10,"description":"How many tools to return for each query (default 5)."},` +
	`"server":{"type":"string","description":"Only tools of this MCP server."}},` +
	`"additionalProperties":false}`

// Tool returns the tool_search tool to register at the agent's scope. It searches the
// deferred tools visible from the caller for one query or a list of them, loads the hits
// into the caller's session (so they are sent, with their exact schemas, from the next
// request on) and returns them: public name, server and raw name, purpose, the other servers
// that offer the same tool, score, and the schemas of the first hits.
func (d *Deferrer) Tool() toolregistry.Tool {
	how := "The tools found are loaded: from your next step on you can call them directly by the names returned, with their schemas."
	if d.opts.proxy() {
		how = "The tools found are returned with their input schemas: call them with " + CallToolName + "."
	}
	return toolregistry.Tool{
		Name: SearchToolName,
		Description: "Search the tools that are not loaded yet (MCP servers' tools) by what you want to do; " +
			"for a task of several steps, pass one query per step in queries. " + how,
		Parameters: json.RawMessage(searchSchema),
		Execute:    d.execute,
		// It reads the registry and loads definitions: no approval needed, safe alongside
		// others. It is the agent's own: the gateway does not offer it to its clients, who
		// have no session of the agent to load tools into (their search is the gateway's).
		Meta: map[string]string{"readOnlyHint": "true", "harness": "agent"},
	}
}

// callSchema is call_tool's input schema.
const callSchema = `{"type":"object","properties":{` +
	`"name":{"type":"string","description":"The tool's name, as tool_search returned it."},` +
	`"arguments":{"type":"object","description":"The tool's arguments, as its input schema says."}},` +
	`"required":["name"],"additionalProperties":false}`

// CallTool returns the call_tool tool to register at the agent's scope beside tool_search:
// it calls the tool its arguments name, one of the tools visible from the caller, with the
// arguments given, through the registry (validation, policy and recording as for a direct
// call; the call's session is passed on). An agent unwraps the call itself before it
// reaches the registry ([ParseCall]), so that its approvals and its log name the tool
// called.
func (d *Deferrer) CallTool() toolregistry.Tool {
	return toolregistry.Tool{
		Name: CallToolName,
		Description: "Call a tool that " + SearchToolName + " found: its name and its arguments (a JSON object, as the tool's input schema in the search result says). " +
			"Search first when you do not know the tool.",
		Parameters: json.RawMessage(callSchema),
		Meta:       map[string]string{"harness": "agent"},
		Execute: func(cx context.Context, call *toolregistry.Call) (*toolregistry.Result, error) {
			name, args, err := ParseCall(call.Args)
			if err != nil {
				return toolregistry.ErrorResult(err.Error()), nil
			}
			return d.reg.Execute(cx, call.Caller, name, args, toolregistry.ExecOptions{CallID: call.ID, Session: call.Session})
		},
	}
}

// ParseCall reads call_tool's arguments: the tool's name and its arguments ("{}" when
// absent; a JSON object given as a string, as models sometimes write it, is taken as the
// object). The error is worded for the model.
func ParseCall(raw json.RawMessage) (string, json.RawMessage, error) {
	var a struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return "", nil, fmt.Errorf("%s arguments: %w", CallToolName, err)
	}
	if a.Name == "" {
		return "", nil, fmt.Errorf("%s needs the name of the tool to call (%s finds it)", CallToolName, SearchToolName)
	}
	if special(a.Name) {
		return "", nil, fmt.Errorf("call %s directly, not through %s", a.Name, CallToolName)
	}
	args := a.Arguments
	var text string
	if json.Unmarshal(args, &text) == nil {
		args = json.RawMessage(text)
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	return a.Name, args, nil
}

func (d *Deferrer) execute(cx context.Context, call *toolregistry.Call) (*toolregistry.Result, error) {
	var a searchArgs
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return nil, fmt.Errorf("tool_search arguments: %w", err)
	}
	var queries []string
	for _, q := range append([]string{a.Query}, a.Queries...) {
		if strings.TrimSpace(q) != "" && !slices.Contains(queries, q) {
			queries = append(queries, q)
		}
	}
	if len(queries) == 0 {
		return toolregistry.ErrorResult("query is empty: say what you want to do (query, or queries: one per need)"), nil
	}
	if len(queries) > MaxQueries {
		return toolregistry.ErrorResult(fmt.Sprintf("%d queries: at most %d in one call", len(queries), MaxQueries)), nil
	}
	limit := a.Limit
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	limit = min(limit, MaxSearchLimit)
	ix := d.index(d.reg.List(call.Caller))
	sem, semErr := d.semantic(cx, ix)
	results := make([]toolsearch.QueryHits, len(queries))
	var all []toolsearch.Hit
	seen := map[string]bool{}
	for i, q := range queries {
		o := toolsearch.SearchOptions{Limit: limit, Server: a.Server, Schemas: DefaultSchemaHits}
		if d.opts.proxy() {
			o.Schemas = limit // the result is the only place the model reads a schema
		}
		var hits []toolsearch.Hit
		if sem != nil {
			var err error
			if hits, err = sem.Search(cx, q, o); err != nil && semErr == nil {
				semErr = err
			}
		} else {
			hits = ix.Search(q, o)
		}
		for j := range hits {
			if seen[hits[j].PublicName] {
				hits[j].InputSchema = nil // shown with an earlier query
				continue
			}
			seen[hits[j].PublicName] = true
			all = append(all, hits[j])
		}
		results[i] = toolsearch.QueryHits{Query: q, Hits: hits}
	}
	if d.opts.Session != nil {
		if s, ok := d.opts.Session(cx); ok {
			names := make([]string, len(all))
			for i, h := range all {
				names[i] = h.PublicName
			}
			d.Load(s, names...)
		}
	}
	doc := map[string]any{"tools": all}
	if len(queries) > 1 {
		doc["queries"] = results
	}
	if semErr != nil {
		doc["embeddingsError"] = semErr.Error() // the hits are the lexical ranking's
	}
	structured, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	var text string
	if len(queries) == 1 {
		text = FormatHits(queries[0], results[0].Hits)
	} else {
		text = FormatQueryHits(results)
	}
	if d.opts.proxy() {
		text = strings.ReplaceAll(text, loadedIntro, proxyIntro)
	}
	return &toolregistry.Result{Content: []toolregistry.Content{toolregistry.Text(text)}, Structured: structured}, nil
}

// FormatQueryHits renders the hits of several queries, one section per query as
// [FormatHits] renders it; a tool found by an earlier query is named again without its
// schema.
func FormatQueryHits(results []toolsearch.QueryHits) string {
	var b strings.Builder
	for i, r := range results {
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "For %q: ", r.Query)
		b.WriteString(FormatHits(r.Query, r.Hits))
	}
	return b.String()
}

// hitLine is the start of a hit's line in a search result ([FormatHits]).
var hitLine = regexp.MustCompile(`(?m)^\d+\. (\S+) \(server `)

// FoundNames returns the public names of the tools a tool_search result's text lists, in
// order: a resumed session loads them again ([CallsDefinitions]).
func FoundNames(text string) []string {
	var out []string
	for _, m := range hitLine.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// The words after a search result's count: the tools are loaded ([CallsDefinitions]), or
// to be called through call_tool ([CallsProxy]).
const (
	loadedIntro = "found and loaded; call them directly by name:"
	proxyIntro  = "found; call them with " + CallToolName + ` {"name": "<name>", "arguments": {...}}:`
)

// maxShownSchema is the largest schema FormatHits shows inline.
const maxShownSchema = 8 << 10

// FormatHits renders hits as tool_search shows them to the model: one line per tool (its
// public name, server and raw name, the other servers that offer it, purpose), each schema
// (up to 8 KiB) on the line below its tool.
func FormatHits(query string, hits []toolsearch.Hit) string {
	var b strings.Builder
	if len(hits) == 0 {
		fmt.Fprintf(&b, "No tool matches %q. Try other words, or fewer.", query)
		return b.String()
	}
	fmt.Fprintf(&b, "%d tool(s) %s\n", len(hits), loadedIntro)
	for i, h := range hits {
		also := ""
		if len(h.Also) > 0 {
			also = "; also on " + strings.Join(h.Also, ", ")
		}
		fmt.Fprintf(&b, "%d. %s (server %s, tool %s%s): %s\n", i+1, h.PublicName, h.Server, h.Name, also, h.Purpose)
		switch {
		case len(h.InputSchema) > maxShownSchema:
			fmt.Fprintf(&b, "   input schema: %d bytes, in the tool's definition from your next step on\n", len(h.InputSchema))
		case h.InputSchema != nil:
			fmt.Fprintf(&b, "   input schema: %s\n", h.InputSchema)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
