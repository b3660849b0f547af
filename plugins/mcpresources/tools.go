package mcpresources

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/cordisgo/harness/plugins/toolregistry"
)

// Names of the three shared resource tools.
const (
	// ToolList lists a server's resources (resources/list).
	ToolList = "list_mcp_resources"
	// ToolTemplates lists a server's resource templates (resources/templates/list).
	ToolTemplates = "list_mcp_resource_templates"
	// ToolRead reads one resource (resources/read).
	ToolRead = "read_mcp_resource"
)

// Parameter schemas of the shared tools (JSON Schema draft 2020-12). They are part of the API:
// the configuration catalog shows them, and the registry validates every call against them
// before the service sees it. The service registers its own copies: modifying these values
// changes nothing.
var (
	// ListParameters is the schema of list_mcp_resources and list_mcp_resource_templates.
	ListParameters = json.RawMessage(`{"type":"object",` +
		`"properties":{` +
		`"server":{"type":"string","minLength":1,"description":"Name of the MCP resource server, exactly as listed in the system prompt."},` +
		`"cursor":{"type":"string","description":"The nextCursor value returned by the previous call for the same server, to get the next page. Omit it for the first page."}` +
		`},"required":["server"]}`)
	// ReadParameters is the schema of read_mcp_resource.
	ReadParameters = json.RawMessage(`{"type":"object",` +
		`"properties":{` +
		`"server":{"type":"string","minLength":1,"description":"Name of the MCP resource server, exactly as listed in the system prompt."},` +
		`"uri":{"type":"string","minLength":1,"description":"URI of the resource to read: a uri from list_mcp_resources, or a URI built from a template of list_mcp_resource_templates."}` +
		`},"required":["server","uri"]}`)
)

// Model-facing descriptions of the shared tools.
const (
	listDescription = "List the resources an MCP server offers. Each resource has a uri to pass to " + ToolRead +
		", a name, and often a description, mimeType and size. Results come in pages: when the result has " +
		"nextCursor, call again with cursor set to that value to get the next page."
	templatesDescription = "List the parameterized resource URI templates an MCP server offers (RFC 6570, " +
		"for example file:///{path}). Fill in a template's placeholders to build a URI, then read it with " +
		ToolRead + ". Paged like " + ToolList + ": pass nextCursor back as cursor."
	readDescription = "Read an MCP resource by URI from the named server. Use a uri listed by " + ToolList +
		" or a URI built from a template listed by " + ToolTemplates + ". Text contents are returned as " +
		"they are; binary contents (blob) are described by size and MIME type instead of shown."
)

// sharedTools builds the three tool definitions, bound to s.
func (s *Service) sharedTools() []toolregistry.Tool {
	meta := map[string]string{"service": Key.Name()}
	list, read := slices.Clone(ListParameters), slices.Clone(ReadParameters)
	return []toolregistry.Tool{
		{Name: ToolList, Description: listDescription, Parameters: list, Execute: s.executor(MethodList), Meta: meta},
		{Name: ToolTemplates, Description: templatesDescription, Parameters: list, Execute: s.executor(MethodTemplates), Meta: meta},
		{Name: ToolRead, Description: readDescription, Parameters: read, Execute: s.executor(MethodRead), Meta: meta},
	}
}

// toolArgs are the arguments of the three tools, already validated by the registry.
type toolArgs struct {
	Server string `json:"server"`
	Cursor string `json:"cursor"`
	URI    string `json:"uri"`
}

// executor returns the Execute function of the tool serving method.
func (s *Service) executor(method string) func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
	return func(cx context.Context, call *toolregistry.Call) (*toolregistry.Result, error) {
		var args toolArgs
		if err := json.Unmarshal(call.Args, &args); err != nil {
			return nil, fmt.Errorf("invalid arguments: %w", err)
		}
		if call.Caller == nil {
			return nil, errors.New("the call has no caller scope to resolve the server in")
		}
		caller := call.Caller.Scope()
		e := s.resolve(caller, args.Server)
		if e == nil {
			return nil, s.unknown(caller.Name(), args.Server, s.servers(caller))
		}
		req := Request{Method: method}
		if method == MethodRead {
			req.URI = args.URI
		} else {
			req.Cursor = args.Cursor
		}
		raw, err := e.p.Request(cx, req, CallerInfo{Scope: caller.Name(), CallID: call.ID})
		if err != nil {
			return nil, fmt.Errorf("MCP resource server %q: %s failed: %w", e.server, method, err)
		}
		text, err := modelText(e.server, raw)
		if err != nil {
			return nil, fmt.Errorf("MCP resource server %q: %s returned an invalid result: %w", e.server, method, err)
		}
		return &toolregistry.Result{
			Content:    []toolregistry.Content{toolregistry.Text(text)},
			Structured: raw,
			Raw:        raw,
		}, nil
	}
}

// unknown is the error of a call naming a server invisible from the caller.
func (s *Service) unknown(scope, server string, visible []string) error {
	if len(visible) == 0 {
		return tagged(ErrUnknownServer, "MCP resource server %q is unavailable in this agent's scope (%q): no MCP resource server is visible here",
			server, scope)
	}
	names, _ := json.Marshal(visible)
	return tagged(ErrUnknownServer, "MCP resource server %q is unavailable in this agent's scope (%q); visible servers: %s",
		server, scope, names)
}

// ToolDoc describes one of the shared resource tools, for documentation.
type ToolDoc struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// ToolDocs returns the three shared tools as the model sees them: names, descriptions and
// parameter schemas.
func ToolDocs() []ToolDoc {
	return []ToolDoc{
		{ToolList, listDescription, slices.Clone(ListParameters)},
		{ToolTemplates, templatesDescription, slices.Clone(ListParameters)},
		{ToolRead, readDescription, slices.Clone(ReadParameters)},
	}
}
