package mcptest

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// NewSampler returns a function making a server named "sampler" with one read-only tool,
// summarize, which asks its client for a completion (sampling) with params and answers
// "sampled: TEXT", or "no sample: ERROR" as an error result when the client refuses. Pass
// it to [NewHTTP].
func NewSampler(params mcp.CreateMessageParams) func() *mcp.Server { //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
	return func() *mcp.Server {
		srv := mcp.NewServer(&mcp.Implementation{Name: "sampler", Version: "1"}, nil)
		mcp.AddTool(srv, &mcp.Tool{Name: "summarize", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(cx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
				p := params
				res, err := req.Session.CreateMessage(cx, &p) //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
				if err != nil {
					return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no sample: " + err.Error()}}}, nil, nil
				}
				return text("sampled: " + res.Content.(*mcp.TextContent).Text), nil, nil
			})
		return srv
	}
}
