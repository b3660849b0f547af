package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/plugins/mcpresources"
)

// resourceProvider serves the server's resources to mcpResources over the live generation.
// It is safe for concurrent use.
type resourceProvider struct{ s *supervisor }

// Request implements mcpresources.Provider: resources/list, resources/templates/list and
// resources/read with the caller's cursor or URI unchanged, bounded by toolCallTimeoutMs,
// answered with the protocol result as JSON. A server without the resources capability
// lists nothing and refuses reads.
func (p resourceProvider) Request(cx context.Context, req mcpresources.Request, _ mcpresources.CallerInfo) (json.RawMessage, error) {
	s := p.s
	g, release, err := s.liveGeneration(cx)
	if err != nil {
		return nil, err
	}
	defer release()
	pcx := cx
	timeout, key := s.cfg.ToolCallTimeout(), "toolCallTimeoutMs"
	if req.Method == mcpresources.MethodRead {
		timeout, key = s.cfg.MaxToolCall(), "maxToolCallMs" // reads time out idle (readResource)
	}
	cx, cancel := context.WithTimeout(cx, timeout)
	defer cancel()
	cx, done := g.bind(cx)
	defer done()
	cs := g.conn.Session()
	hasResources := g.conn.Info().Capabilities.Resources != nil
	var res any
	switch req.Method {
	case mcpresources.MethodList:
		if !hasResources {
			return json.RawMessage(`{"resources":[]}`), nil
		}
		res, err = cs.ListResources(cx, &mcp.ListResourcesParams{Cursor: req.Cursor})
	case mcpresources.MethodTemplates:
		if !hasResources {
			return json.RawMessage(`{"resourceTemplates":[]}`), nil
		}
		res, err = cs.ListResourceTemplates(cx, &mcp.ListResourceTemplatesParams{Cursor: req.Cursor})
	case mcpresources.MethodRead:
		if !hasResources {
			return nil, fmt.Errorf("mcp server %q does not offer resources", s.cfg.ServerName)
		}
		res, err = s.readResource(cx, g, &mcp.ReadResourceParams{URI: req.URI})
		if asIdle(err) != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("mcp server %q: unsupported resource method %q", s.cfg.ServerName, req.Method)
	}
	if err != nil {
		if pcx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("mcp server %q: %s timed out after %v (%s)", s.cfg.ServerName, req.Method, timeout, key)
		}
		return nil, s.callError(pcx, g, req.Method, err)
	}
	return json.Marshal(res)
}
