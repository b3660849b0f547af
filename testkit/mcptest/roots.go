package mcptest

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// AddRootsTool adds to srv a tool "roots" that asks the calling client for its roots
// (roots/list) and answers with their URIs, as fmt.Sprint prints them ("[file:///a
// file:///b]"); the client's error is the call's.
func AddRootsTool(srv *mcp.Server) {
	mcp.AddTool(srv, &mcp.Tool{Name: "roots"}, func(cx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.ListRoots(cx, nil) //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)
		if err != nil {
			return nil, nil, err
		}
		var uris []string
		for _, r := range res.Roots {
			uris = append(uris, r.URI)
		}
		return text(fmt.Sprint(uris)), nil, nil
	})
}
