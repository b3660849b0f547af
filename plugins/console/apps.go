package console

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/remote"
)

// MCP Apps (SEP-1865): the page renders the view of a tool that names one (Tool.UI) in the
// remote plugin's sandbox, and the app reads its server's resources through
// console/readResource (its HTML first) and calls tools through console/callTool, as the
// page does.

// ToolUI is a tool's MCP App, from its _meta.ui. It is a plain value.
type ToolUI struct {
	// ResourceURI is the ui:// resource holding the view's HTML.
	ResourceURI string `json:"resourceUri"`
	// Visibility is who may call the tool: "model", "app" or both (the default when the
	// server said nothing).
	Visibility []string `json:"visibility"`
}

// toolUI reads a registry tool's metadata for its app; nil without one.
func toolUI(meta map[string]string) *ToolUI {
	uri := meta[mcpclient.MetaUIResource]
	if uri == "" {
		return nil
	}
	vis := []string{"model", "app"}
	if v, ok := meta[mcpclient.MetaUIVisibility]; ok {
		vis = strings.Split(v, ",")
	}
	return &ToolUI{ResourceURI: uri, Visibility: vis}
}

// ReadResourceParams are the parameters of console/readResource.
type ReadResourceParams struct {
	Server string `json:"server"`
	URI    string `json:"uri"`
}

// Validate requires the server and the URI.
func (p ReadResourceParams) Validate() error {
	var probs ctx.Problems
	probs.Require("server", p.Server, "the MCP server's name")
	probs.Require("uri", p.URI, "the resource's URI")
	return probs.Err()
}

// MethodReadResource reads a resource of a server and answers the server's result as it
// sent it (contents with their _meta): an app's HTML and its metadata (ui.csp,
// ui.permissions, ui.prefersBorder), and what an app reads.
var MethodReadResource = remote.NewMethod[ReadResourceParams, *mcp.ReadResourceResult]("console/readResource")

// readResource is console/readResource: resources/read on the server's live connection,
// bounded by the request and the client's call timeouts.
func (s *service) readResource(rcx context.Context, p ReadResourceParams) (*mcp.ReadResourceResult, error) {
	u, ok := mcpclient.LookupUpstream(s.c, p.Server)
	if !ok {
		return nil, remote.Errorf(remote.CodeNotFound, "no MCP server %q", p.Server)
	}
	res, err := u.ReadResource(rcx, &mcp.ReadResourceParams{URI: p.URI})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", p.URI, err)
	}
	return res, nil
}
