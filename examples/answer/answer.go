// Package answer is the "Answering MCP servers' questions" example of docs/plugins.md: a
// plugin that answers elicitations (form and URL) and sampling requests of the MCP servers
// below it.
package answer

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/elicitation"
	"github.com/cordisgo/harness/sampling"
)

// Plugin answers for the MCP clients mounted in its layer and below. Mount it, and let it
// load (Settle), before them: a client declares elicitation and sampling when it connects,
// and one that connected before the plugin loaded reconnects once to declare them.
var Plugin = ctx.Define(ctx.Meta{Name: "answer"}, func(c *ctx.Context, _ struct{}) error {
	if _, err := elicitation.Provide(c, "answer", Responder{Name: "Grace"}); err != nil {
		return err
	}
	// Sampling is deprecated by SEP-2577 (protocol 2026-07-28); servers on 2025-11-25 still ask.
	//nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it
	_, err := sampling.Provide(c, "answer", sampling.Func(func(_ context.Context, r *sampling.Request) (*mcp.CreateMessageResult, error) {
		return &mcp.CreateMessageResult{Role: "assistant", Model: "echo", Content: &mcp.TextContent{Text: "no model here"}}, nil
	}))
	return err
})

// Responder fills every form with its defaults, and a name; it agrees to visit a URL when
// the server is the demo. It is stateless, so safe for concurrent use.
type Responder struct{ Name string }

// Supports reports which modes the responder answers: both.
func (Responder) Supports(elicitation.Mode) bool { return true }

// Elicit answers one request. r.Form is the parsed schema: fields with kind, title,
// choices, limits and default.
func (a Responder) Elicit(cx context.Context, r *elicitation.Request) (*elicitation.Response, error) {
	if r.Mode == elicitation.ModeURL {
		if r.Server != "demo" || !strings.HasPrefix(r.URL, "https://") {
			return &elicitation.Response{Action: elicitation.Decline}, nil
		}
		return &elicitation.Response{Action: elicitation.Accept}, nil // the user agreed to open r.URL
	}
	content := map[string]any{}
	for _, f := range r.Form.Fields {
		switch {
		case f.Name == "name":
			content[f.Name] = a.Name
		case f.Default != nil:
			content[f.Name] = f.Default
		case f.Required:
			return nil, fmt.Errorf("%s: no answer for %s", r.Server, f.Label()) // logged; the next responder is asked
		}
	}
	// The service checks the answer against the schema (Form.Check) before it is sent.
	return &elicitation.Response{Action: elicitation.Accept, Content: content}, nil
}
