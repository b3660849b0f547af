package gateway

import (
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/plugins/toolregistry"
)

// result turns what the registry's pipeline returned into an MCP tool result. A result that
// kept the server's canonical JSON (Raw: an MCP server's tool, successful or isError) is
// passed back as the server sent it; any other outcome (a harness tool, a denied, invalid,
// timed-out or cancelled call) becomes a result built from the model-facing content, with
// isError set on failure. Pipeline failures are tool results, never protocol errors, so a
// client shows them to its model.
func (g *Gateway) result(res *toolregistry.Result, err error) *mcp.CallToolResult {
	var te *toolregistry.ToolError
	serverOwn := err == nil || (errors.As(err, &te) && te.Code == toolregistry.CodeToolError)
	if res != nil && len(res.Raw) > 0 && serverOwn {
		var out mcp.CallToolResult
		if uerr := json.Unmarshal(res.Raw, &out); uerr == nil {
			if err != nil {
				out.IsError = true
			}
			return &out
		}
	}
	out := &mcp.CallToolResult{IsError: err != nil || (res != nil && res.IsError)}
	if res == nil {
		out.Content = []mcp.Content{&mcp.TextContent{Text: "Error: " + err.Error()}}
		return out
	}
	for _, c := range res.Content {
		switch c.Type {
		case toolregistry.ContentImage:
			if c.Attachment != nil {
				if data, mt, ok := g.reg.Attachments().Get(c.Attachment.ID); ok {
					out.Content = append(out.Content, &mcp.ImageContent{Data: data, MIMEType: mt})
					continue
				}
			}
			out.Content = append(out.Content, &mcp.TextContent{Text: c.ModelText()})
		default:
			out.Content = append(out.Content, &mcp.TextContent{Text: c.ModelText()})
		}
	}
	if len(res.Structured) > 0 && !out.IsError {
		out.StructuredContent = res.Structured
	}
	if out.Content == nil {
		out.Content = []mcp.Content{}
	}
	return out
}
