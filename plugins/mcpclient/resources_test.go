package mcpclient

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/mcpresources"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// TestResourceProvider (item 8): the server's resources are reachable through the shared
// resource tools while the client lives; the provider goes with the client.
func TestResourceProvider(t *testing.T) {
	e := newEnv(t)
	ctxtest.MountActive(t, e.root, mcpresources.Plugin, nil)
	s := e.mount(nil, memConfig("srv"), &hooks{dial: newMemServer(demo()).dial})
	ctxtest.Settle(t, e.root)
	if got := e.mustCall(nil, mcpresources.ToolList, `{"server":"srv"}`).Text(); !strings.Contains(got, "demo://readme") {
		t.Errorf("list: %q", got)
	}
	if got := e.mustCall(nil, mcpresources.ToolTemplates, `{"server":"srv"}`).Text(); !strings.Contains(got, "demo://notes/{id}") {
		t.Errorf("templates: %q", got)
	}
	if got := e.mustCall(nil, mcpresources.ToolRead, `{"server":"srv","uri":"demo://notes/7"}`).Text(); got == "" {
		t.Errorf("read: %q", got)
	}
	must(t, s.Dispose(ctxtest.Wait(t)))
	if _, err := e.call(nil, mcpresources.ToolList, `{"server":"srv"}`); !errors.Is(err, toolregistry.ErrUnknownTool) {
		t.Errorf("resource tools after the last provider left: %v", err)
	}
}

// TestResourcesWithoutCapability (item 8): a server without resources lists nothing and
// refuses reads; a disconnected one fails fast.
func TestResourcesWithoutCapability(t *testing.T) {
	e := newEnv(t)
	srv := bareServer()
	rawTool(srv, &mcp.Tool{Name: "t"}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return textResult("t"), nil
	})
	var sup *supervisor
	e.mount(nil, memConfig("srv"), &hooks{dial: newMemServer(srv).dial, observe: func(s *supervisor) { sup = s }})
	p := resourceProvider{sup}
	raw, err := p.Request(e.root, mcpresources.Request{Method: mcpresources.MethodList}, mcpresources.CallerInfo{})
	if err != nil || string(raw) != `{"resources":[]}` {
		t.Errorf("list: %s %v", raw, err)
	}
	if _, err := p.Request(e.root, mcpresources.Request{Method: mcpresources.MethodRead, URI: "x://y"}, mcpresources.CallerInfo{}); err == nil ||
		!strings.Contains(err.Error(), "does not offer resources") {
		t.Errorf("read: %v", err)
	}
	sup.live.Store(nil)
	if _, err := p.Request(e.root, mcpresources.Request{Method: mcpresources.MethodList}, mcpresources.CallerInfo{}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("disconnected: %v", err)
	}
}
