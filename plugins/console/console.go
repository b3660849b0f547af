// Package console serves the remote methods the management page needs beyond the
// manager's (mcpManager/*): the tools of a server with their schemas, a tool call through
// the tools service's pipeline, a server's instructions, a subscription to a server's
// resource, and the answers to servers' elicitations. Mount [Plugin] once, next to
// the tools service (plugins/toolregistry) and the remote API (plugins/remote); the web
// profile does.
//
// # Remote methods
//
//	console/tools         call  {"server": name}   → [Tool]   ("" lists every tool)
//	console/callTool      call  {"tool", "args"}   → CallResult
//	console/instructions  call  {"server": name}   → {"text": …}
//	console/subscribe     stream {"server", "uri"}  → ResourceUpdate (subscribed, then one per update)
//	console/readResource  call  {"server", "uri"}   → the server's resources/read result, as sent
//	console/elicitations  stream                    → Elicitation (pending, then done)
//	console/answer        call  AnswerParams        → {"ok": true}
//
// # Elicitations
//
// The console is an elicitation responder ([elicitation.Provide]) of the tree below it,
// for forms and URLs: a server's question goes to the pages following
// console/elicitations (each question once as "pending", with the form's fields parsed
// from the requested schema, and once as "done" when it ends, however it ends), and the
// first console/answer for it (accept with the form's content, decline or cancel) is the
// answer. A form's content is checked against the schema before it is taken; a wrong
// value is refused with bad_request naming the field, and the question stays pending.
// With no page following, the console passes ([elicitation.ErrPass]): the other
// responders answer, or the request is declined; a console that unloads passes on the
// questions it was showing.
//
// MCP clients declare elicitation when they connect and look the responders up when a
// question arrives: a host that mounts a console offers its modes before the rows mount
// (host.Host.Mount), so the clients declare them whichever row loads first; a client that
// connected before a console came (one added by a reload) reconnects once to declare them.
//
// A tool call runs through [toolregistry.Registry.Execute] from the console's scope: the
// same validation, policy, timeout, output cap and history as a model's call; it is
// recorded with a call id "console_<n>". Images in the result are sent as data: URLs,
// read from the tools service's attachment store. console/subscribe holds one reference to
// the server's subscription of a URI (through the mcpResources service, so any number of
// pages share one resources/subscribe) while the stream is open, and sends a value per
// notifications/resources/updated. Nothing here reads or sends a secret: a
// server's configuration is the manager's (redacted) business.
//
// # Concurrency
//
// The methods are safe for concurrent use; each call runs on the remote API's request
// goroutine and ends with the request.
package console

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/elicitation"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/remote"
	"github.com/cordisgo/harness/plugins/sysprompt"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// The console's remote methods, each declared once with its parameters and answer.
var (
	// MethodTools lists the tools, those of one server when asked.
	MethodTools = remote.NewMethod[ServerParams, []Tool]("console/tools")
	// MethodCallTool calls a tool through the tools service's pipeline.
	MethodCallTool = remote.NewMethod[CallParams, CallResult]("console/callTool")
	// MethodInstructions answers a server's instructions.
	MethodInstructions = remote.NewMethod[ServerParams, Instructions]("console/instructions")
	// MethodSubscribe streams a resource's updates.
	MethodSubscribe = remote.NewStreamMethod[SubscribeParams, ResourceUpdate]("console/subscribe")
	// MethodElicitations streams the servers' questions, pending and done.
	MethodElicitations = remote.NewStreamMethod[struct{}, Elicitation]("console/elicitations")
	// MethodAnswer answers a question.
	MethodAnswer = remote.NewMethod[AnswerParams, AnswerResult]("console/answer")
)

// Plugin exposes the console/* remote methods. It has no configuration.
var Plugin = ctx.Define(ctx.Meta{Name: "console", Inject: []ctx.Dependency{toolregistry.Key}}, apply)

// Tool is one tool as console/tools lists it. It is a plain value.
type Tool struct {
	// Name is the public tool name (mcp__<server>__<tool> for an MCP server's).
	Name string `json:"name"`
	// Title is the tool's human-readable title, if its server gave one.
	Title string `json:"title,omitempty"`
	// Description is the tool's description.
	Description string `json:"description,omitempty"`
	// Parameters is the input JSON schema.
	Parameters json.RawMessage `json:"parameters"`
	// OutputSchema is the output JSON schema, if the tool declares one.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Server is the MCP server the tool comes from ("" for other tools); MCPTool the tool's
	// name on that server.
	Server  string `json:"server,omitempty"`
	MCPTool string `json:"mcpTool,omitempty"`
	// Owner is the registering scope or set owner.
	Owner string `json:"owner"`
	// UI is the tool's MCP App, when its server gave it one.
	UI *ToolUI `json:"ui,omitempty"`
}

// Content is one block of a [CallResult]. It is a plain value.
type Content struct {
	// Type is text, json or image.
	Type string `json:"type"`
	// Text holds a text block.
	Text string `json:"text,omitempty"`
	// JSON holds a json block.
	JSON json.RawMessage `json:"json,omitempty"`
	// MediaType and DataURL hold an image ("data:<type>;base64,…"); DataURL is empty when
	// the attachment is no longer stored.
	MediaType string `json:"mediaType,omitempty"`
	DataURL   string `json:"dataURL,omitempty"`
}

// CallResult is the answer of console/callTool. It is a plain value.
type CallResult struct {
	// CallID is the call's id in the tools service's history.
	CallID string `json:"callId"`
	// Content is the model-facing content, images as data: URLs.
	Content []Content `json:"content"`
	// Structured is the structured result, if any.
	Structured json.RawMessage `json:"structured,omitempty"`
	// IsError marks a failed call; Code is the tools service's outcome code and Error its
	// message.
	IsError bool   `json:"isError,omitempty"`
	Code    string `json:"code,omitempty"`
	Error   string `json:"error,omitempty"`
	// Raw is the MCP server's own CallToolResult, as it sent it, for a tool of an MCP
	// server that answered (an app's view gets it whole).
	Raw json.RawMessage `json:"raw,omitempty"`
}

// CallParams are the parameters of console/callTool.
type CallParams struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
	// Ref is the caller's own name for the call (at most 64 bytes): a question the call
	// raises carries it (Elicitation.Call), so a page can show it next to the call.
	Ref string `json:"ref,omitempty"`
}

// ServerParams are the parameters of console/tools and console/instructions.
type ServerParams struct {
	Server string `json:"server"`
}

// Instructions is the answer of console/instructions.
type Instructions struct {
	// Text is the server's instructions as the system prompt attributes them ("" if none).
	Text string `json:"text"`
}

// Validate requires a tool and a ref of at most 64 bytes.
func (p CallParams) Validate() error {
	var probs ctx.Problems
	probs.Require("tool", p.Tool, "the tool's public name")
	if len(p.Ref) > 64 {
		probs.Add("ref", "longer than 64 bytes")
	}
	return probs.Err()
}

type service struct {
	c   *ctx.Context
	reg *toolregistry.Registry
	seq atomic.Uint64
}

func apply(c *ctx.Context, _ struct{}) error {
	s := &service{c: c, reg: toolregistry.Key.Use(c)}
	for _, expose := range []func() (ctx.Disposer, error){
		func() (ctx.Disposer, error) { return MethodTools.Expose(c, s.tools) },
		func() (ctx.Disposer, error) { return MethodCallTool.Expose(c, s.callTool) },
		func() (ctx.Disposer, error) { return MethodInstructions.Expose(c, s.instructions) },
		func() (ctx.Disposer, error) { return MethodSubscribe.Expose(c, s.subscribe) },
		func() (ctx.Disposer, error) { return MethodReadResource.Expose(c, s.readResource) },
	} {
		if _, err := expose(); err != nil {
			return err
		}
	}
	return provideResponder(c)
}

// tools lists the tools visible from the root, those of one MCP server when asked.
func (s *service) tools(_ context.Context, p ServerParams) ([]Tool, error) {
	out := []Tool{}
	for _, t := range s.reg.List(s.c) {
		server := t.Meta["server"]
		if p.Server != "" && server != p.Server {
			continue
		}
		out = append(out, Tool{Name: t.Name, Title: t.Meta["title"], Description: t.Description, Parameters: t.Parameters,
			OutputSchema: t.OutputSchema, Server: server, MCPTool: t.Meta["mcpTool"], Owner: t.Owner, UI: toolUI(t.Meta)})
	}
	slices.SortFunc(out, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// callTool executes a tool through the registry's pipeline, bounded by the request.
func (s *service) callTool(rcx context.Context, p CallParams) (CallResult, error) {
	if p.Ref != "" {
		rcx = elicitation.WithOrigin(rcx, elicitation.Origin{Call: p.Ref})
	}
	id := fmt.Sprintf("console_%d", s.seq.Add(1))
	res, err := s.reg.Execute(rcx, s.c, p.Tool, p.Args, toolregistry.ExecOptions{CallID: id})
	out := CallResult{CallID: id, Content: []Content{}}
	if res != nil {
		out.Structured, out.IsError, out.Raw = res.Structured, res.IsError, res.Raw
		for _, b := range res.Content {
			out.Content = append(out.Content, s.content(b))
		}
	}
	if te, ok := errors.AsType[*toolregistry.ToolError](err); ok {
		out.IsError, out.Code, out.Error = true, string(te.Code), te.Error()
	} else if err != nil {
		out.IsError, out.Error = true, err.Error()
	}
	return out, nil
}

func (s *service) content(b toolregistry.Content) Content {
	c := Content{Type: string(b.Type), Text: b.Text, JSON: b.JSON}
	if b.Type == toolregistry.ContentImage && b.Attachment != nil {
		c.MediaType = b.Attachment.MediaType
		if data, mt, ok := s.reg.Attachments().Get(b.Attachment.ID); ok {
			c.DataURL = "data:" + mt + ";base64," + base64.StdEncoding.EncodeToString(data)
		}
	}
	return c
}

// instructions returns the server's section of the system prompt, if the prompt service
// runs.
func (s *service) instructions(_ context.Context, p ServerParams) (Instructions, error) {
	if p.Server == "" {
		return Instructions{}, remote.Errorf(remote.CodeBadRequest, `parameters: "server" is required`)
	}
	sp, ok := sysprompt.Key.Get(s.c)
	if !ok {
		return Instructions{}, nil
	}
	pr, err := sp.Assemble(s.c, nil)
	if err != nil {
		return Instructions{}, fmt.Errorf("assembling the system prompt: %w", err)
	}
	for _, sec := range pr.Sections {
		if sec.Name == mcpclient.Owner(p.Server) {
			return Instructions{Text: sec.Text}, nil
		}
	}
	return Instructions{}, nil
}
