package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/internal/jsoncheck"
	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// objectSchema is the parameters schema of a tool whose own schema cannot be used.
var objectSchema = json.RawMessage(`{"type":"object"}`)

// listTools lists cs's tools, every page of them (listAll; limit as there).
func listTools(cx context.Context, cs *mcp.ClientSession, limit int) ([]*mcp.Tool, bool, error) {
	return listAll(func(cursor string) ([]*mcp.Tool, string, error) {
		res, err := cs.ListTools(cx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Tools, res.NextCursor, nil
	}, limit)
}

// remoteTool is one discovered tool: what its Execute needs, built once per discovery so a
// call does no lookup but one atomic load.
type remoteTool struct {
	s      *supervisor
	raw    string // the name on the wire
	public string
	// taskSupport is the tool's execution.taskSupport ("required", "optional" or "");
	// lastTook the duration of its last call on this client, in nanoseconds.
	taskSupport string
	lastTook    atomic.Int64
}

// discover lists g's tools and builds their registry definitions: public names
// mcp__<server>__<tool>, descriptions and schemas passed through, the allow-list applied. A
// server without the tools capability has none. A raw name listed twice rejects the listing.
func (s *supervisor) discover(cx context.Context, g *generation) ([]toolregistry.Tool, error) {
	server := s.cfg.ServerName
	if g.conn.Info().Capabilities.Tools == nil {
		s.listed(g, []*mcp.Tool{})
		return nil, nil
	}
	listed, _, err := listTools(cx, g.conn.Session(), 0)
	if err != nil {
		return nil, fmt.Errorf("mcp server %q: tools/list: %w", server, err)
	}
	raws := make(map[string]bool, len(listed))
	publics := make(map[string]string, len(listed))
	tools := make([]toolregistry.Tool, 0, len(listed))
	kept := make([]*mcp.Tool, 0, len(listed))
	for _, t := range listed {
		if raws[t.Name] {
			return nil, fmt.Errorf("mcp server %q listed tool %q more than once: invalid tool list", server, t.Name)
		}
		raws[t.Name] = true
		if t.Name == "" {
			s.log.Warn("ignoring a tool without a name")
			continue
		}
		if !s.cfg.Allows(t.Name) {
			continue
		}
		public := PublicToolName(server, t.Name)
		if other, dup := publics[public]; dup {
			return nil, fmt.Errorf("mcp server %q: tools %q and %q have the same public name %q: invalid tool list", server, other, t.Name, public)
		}
		publics[public] = t.Name
		tools = append(tools, s.toolDef(t, public, true))
		kept = append(kept, t)
	}
	s.listed(g, kept)
	if s.cfg.AllowedTools != nil {
		var missing []string
		for _, name := range *s.cfg.AllowedTools {
			if !raws[name] {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			s.log.Warn(fmt.Sprintf("allowedTools names %d tool(s) the server did not list: %q — entries are raw MCP tool names, not mcp__%s__… public names",
				len(missing), missing, server))
		}
	}
	return tools, nil
}

// toolDef builds the registry definition of t. With resolve, a schema that does not resolve
// is replaced (the input's by an object schema, the output's by none) so that one tool's bad
// schema costs only its checks; without, the registry's compile is the only check (a
// cached list, whose schemas resolved when the server listed them, is registered whole or
// not at all).
func (s *supervisor) toolDef(t *mcp.Tool, public string, resolve bool) toolregistry.Tool {
	rt := &remoteTool{s: s, raw: t.Name, public: public, taskSupport: taskSupportOf(t)}
	params, err := usableSchema(t.InputSchema, resolve)
	if err != nil {
		s.log.Warn("tool input schema unusable; arguments are passed unchecked", "tool", t.Name, "err", err)
		params = objectSchema
	}
	var out json.RawMessage
	if t.OutputSchema != nil {
		if out, err = usableSchema(t.OutputSchema, resolve); err != nil {
			s.log.Warn("tool output schema unusable; structured content is not checked", "tool", t.Name, "err", err)
			out = nil
		}
	}
	def := toolregistry.Tool{
		Name:         public,
		Description:  t.Description,
		Parameters:   params,
		OutputSchema: out,
		Timeout:      s.cfg.MaxToolCall(), // the idle timeout is the watchdog's (progress.go)
		Execute:      rt.execute,
		Meta:         toolMeta(s.cfg.ServerName, t),
	}
	if arg, ok := t.Meta[DryRunMetaKey].(string); ok && arg != "" {
		def.Preview = rt.preview(arg)
	}
	return def
}

// The _meta keys of the dry-run convention (the workspace server's, package workspace).
const (
	// DryRunMetaKey, in a tool's _meta, names its boolean argument that makes a call only
	// say what it would do: the client calls the tool with it set to preview a call for an
	// approval ([toolregistry.Tool.Preview]).
	DryRunMetaKey = "harness/dryRun"
	// PreviewMetaKey, in a dry run's result _meta, says what the text shows: "diff",
	// "command" or "text" (the default).
	PreviewMetaKey = "harness/preview"
)

// preview is the tool's Preview for a server that offers a dry run through the argument
// arg: the call made with arg set to true, on the live generation, its text the preview.
func (t *remoteTool) preview(arg string) func(context.Context, json.RawMessage) (*permission.Preview, error) {
	return func(cx context.Context, args json.RawMessage) (*permission.Preview, error) {
		var m map[string]any
		if err := json.Unmarshal(args, &m); err != nil || m == nil {
			m = map[string]any{}
		}
		m[arg] = true
		s := t.s
		g, release, err := s.liveGeneration(cx)
		if err != nil {
			return nil, err
		}
		defer release()
		res, err := g.conn.Session().CallTool(cx, &mcp.CallToolParams{Name: t.raw, Arguments: m})
		if err != nil {
			return nil, s.callError(cx, g, "tools/call "+t.raw+" (dry run)", err)
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		if res.IsError {
			return nil, fmt.Errorf("mcp server %q: %s (dry run): %s", s.cfg.ServerName, t.raw, b.String())
		}
		kind, _ := res.Meta[PreviewMetaKey].(string)
		switch kind {
		case permission.PreviewDiff, permission.PreviewCommand:
		default:
			kind = permission.PreviewText
		}
		return &permission.Preview{Kind: kind, Text: b.String()}, nil
	}
}

// toolMeta is a tool's registry metadata: its server, its MCP name, its title (the tool's,
// else its annotations'; absent when it has none), its MCP App's view when it has one
// ([MetaUIResource], [MetaUIVisibility], [MetaUI]) and the hints of its
// annotations that are set ("readOnlyHint", "destructiveHint", "idempotentHint",
// "openWorldHint": "true" or "false"), which the agent reads to decide what may run
// alongside other calls and what needs no approval. Hints are what the server claims,
// not guarantees.
func toolMeta(server string, t *mcp.Tool) map[string]string {
	meta := map[string]string{"server": server, "mcpTool": t.Name}
	if ts := taskSupportOf(t); ts != "" {
		meta["taskSupport"] = ts
	}
	if uri, vis := uiMeta(t.Meta); uri != "" {
		meta[MetaUIResource] = uri
		if vis != "" {
			meta[MetaUIVisibility] = vis
		}
		if b, err := json.Marshal(appMeta(t.Meta)); err == nil {
			meta[MetaUI] = string(b)
		}
	}
	a := t.Annotations
	if title := t.Title; title != "" {
		meta["title"] = title
	} else if a != nil && a.Title != "" {
		meta["title"] = a.Title
	}
	if a == nil {
		return meta
	}
	meta["readOnlyHint"] = strconv.FormatBool(a.ReadOnlyHint)
	meta["idempotentHint"] = strconv.FormatBool(a.IdempotentHint)
	if a.DestructiveHint != nil {
		meta["destructiveHint"] = strconv.FormatBool(*a.DestructiveHint)
	}
	if a.OpenWorldHint != nil {
		meta["openWorldHint"] = strconv.FormatBool(*a.OpenWorldHint)
	}
	return meta
}

// usableSchema returns v (a schema as the SDK decoded it) as JSON the tool registry can
// compile: a JSON object that resolves (checked only with resolve, the most costly step of
// registering a tool). A $schema naming another draft is dropped (the keywords servers use
// mean the same in the supported drafts).
func usableSchema(v any, resolve bool) (json.RawMessage, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil || keys == nil {
		return nil, errors.New("not a JSON object")
	}
	var draft string
	if d, ok := keys["$schema"]; ok {
		_ = json.Unmarshal(d, &draft)
		if !jsoncheck.SupportedDraft(draft) {
			delete(keys, "$schema")
			if raw, err = json.Marshal(keys); err != nil {
				return nil, err
			}
		}
	}
	if !resolve {
		return raw, nil
	}
	sc := new(jsonschema.Schema)
	if err := json.Unmarshal(raw, sc); err != nil {
		return nil, err
	}
	if _, err := sc.Resolve(nil); err != nil {
		return nil, err
	}
	return raw, nil
}

// execute is the tool's Execute: one tools/call on the live generation, with the raw name.
// The registry has validated the arguments and bounds ctx with toolCallTimeoutMs; the SDK
// turns ctx's end into notifications/cancelled for the server.
func (t *remoteTool) execute(cx context.Context, call *toolregistry.Call) (*toolregistry.Result, error) {
	s := t.s
	g, release, err := s.liveGeneration(cx)
	if err != nil {
		return nil, err
	}
	defer release()
	if !g.track(call) {
		return nil, s.unavailable()
	}
	meta := callMeta(cx)
	f := s.watch(cx, g, "tools/call", t.raw, call.ID, meta[progressTokenKey], call.Cancel)
	params := &mcp.CallToolParams{Meta: withProgressToken(meta, f.wire), Name: t.raw, Arguments: call.Args}
	started := time.Now()
	var res *mcp.CallToolResult
	if s.asTask(cx, g, t) {
		res, err = s.callAsTask(cx, g, f, params)
	} else {
		res, err = g.conn.Session().CallTool(cx, params)
	}
	t.lastTook.Store(int64(time.Since(started)))
	g.untrack(call)
	if err != nil {
		if idle := idleCause(cx); idle != nil {
			err = idle
		} else {
			err = s.callError(cx, g, "tools/call "+t.raw, err)
		}
	}
	s.unwatch(g, f, err)
	if err != nil {
		return nil, err
	}
	return AdaptResult(t.raw, res, call.Attachments, s.cfg.MaxOutputBytes), nil
}

// callError classifies the error of a request on g made with the caller's context cx. A
// session the server forgot, or a closed connection, makes the supervisor reconnect.
func (s *supervisor) callError(cx context.Context, g *generation, what string, err error) error {
	if cx.Err() != nil && !errors.Is(context.Cause(cx), errGenerationClosed) {
		return err // timeout or cancellation: the registry reports it from ctx
	}
	server := s.cfg.ServerName
	if g.life.Err() != nil {
		return &unavailableError{msg: fmt.Sprintf("mcp server %q: the connection was closed during %s", server, what)}
	}
	if sessionGone(err) {
		g.markLost(err)
		return &unavailableError{msg: fmt.Sprintf("mcp server %q lost the connection during %s and is reconnecting: %v", server, what, err), cause: err}
	}
	if strings.Contains(err.Error(), "content type") {
		return fmt.Errorf("mcp server %q: %s: [unsupported MCP content: the result could not be decoded: %w]", server, what, err)
	}
	return fmt.Errorf("mcp server %q: %s: %w", server, what, err)
}

// The registry metadata of a tool with an MCP App (SEP-1865, @modelcontextprotocol/ext-apps):
// the tool's _meta.ui as the server sent it, for the page that renders the view and for
// the gateway that passes it on.
const (
	// MetaUIResource is the ui:// URI of the tool's view (_meta.ui.resourceUri, or the
	// deprecated flat _meta["ui/resourceUri"]).
	MetaUIResource = permission.MetaUIResource
	// MetaUIVisibility is _meta.ui.visibility joined with commas ("model,app", "app"); absent
	// when the server left it out (both, the default).
	MetaUIVisibility = permission.MetaUIVisibility
	// MetaUI is the tool's _meta entries of MCP Apps as the server sent them (a JSON
	// object: "ui", and the deprecated "ui/resourceUri" when present), for a gateway that
	// passes them on unchanged.
	MetaUI = "ui.meta"
	// UIExtension is the client capability's extension key of MCP Apps, and UIMimeType the
	// type of an app's HTML.
	UIExtension = "io.modelcontextprotocol/ui"
	UIMimeType  = "text/html;profile=mcp-app"
)

// uiMeta reads a tool's _meta for its view: the resource URI (a ui:// URI, else "") and
// the visibility list joined with commas.
func uiMeta(m mcp.Meta) (uri, visibility string) {
	ui, _ := m["ui"].(map[string]any)
	uri, _ = ui["resourceUri"].(string)
	if uri == "" {
		uri, _ = m["ui/resourceUri"].(string)
	}
	if !strings.HasPrefix(uri, "ui://") {
		return "", ""
	}
	if list, ok := ui["visibility"].([]any); ok {
		var vis []string
		for _, v := range list {
			if s, ok := v.(string); ok && (s == "model" || s == "app") {
				vis = append(vis, s)
			}
		}
		visibility = strings.Join(vis, ",")
	}
	return uri, visibility
}

// appMeta is the part of a tool's _meta that belongs to MCP Apps.
func appMeta(m mcp.Meta) mcp.Meta {
	out := mcp.Meta{}
	for _, k := range []string{"ui", "ui/resourceUri"} {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}
