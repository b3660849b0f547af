package mcpclient

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

type writeArgs struct {
	Path   string `json:"path"`
	DryRun bool   `json:"dryRun,omitempty"`
}

// TestDryRunPreview: a tool whose _meta names a dry-run argument is previewed by calling it
// with that argument set, before the call runs; the result's _meta says what kind of
// preview it is. A tool without one has no preview.
func TestDryRunPreview(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "w", Version: "1"}, nil)
	var calls []writeArgs
	mcp.AddTool(srv, &mcp.Tool{Name: "write", Meta: mcp.Meta{DryRunMetaKey: "dryRun"}},
		func(_ context.Context, _ *mcp.CallToolRequest, in writeArgs) (*mcp.CallToolResult, any, error) {
			calls = append(calls, in)
			if in.DryRun {
				return &mcp.CallToolResult{Meta: mcp.Meta{PreviewMetaKey: "diff"}, Content: []mcp.Content{&mcp.TextContent{Text: "+++ " + in.Path}}}, nil, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "wrote " + in.Path}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "plain"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	e := newEnv(t)
	e.mount(nil, memConfig("w"), &hooks{dial: newMemServer(srv).dial})
	if _, err := toolregistry.Policy.On(e.root, func(*toolregistry.PolicyRequest, func() (permission.Decision, error)) (permission.Decision, error) {
		return permission.Decision{Action: permission.Ask}, nil
	}); err != nil {
		t.Fatal(err)
	}
	previews := map[string]*permission.Preview{}
	if _, err := toolregistry.ApprovalKey.Provide(e.root, toolregistry.ApproverFunc(func(cx context.Context, req *toolregistry.PolicyRequest, _ string) (toolregistry.Approval, error) {
		p, err := req.Preview(cx)
		previews[req.Tool.Name] = p
		return toolregistry.Approval{Approved: true}, err
	})); err != nil {
		t.Fatal(err)
	}
	res := e.mustCall(nil, "mcp__w__write", `{"path":"a.go"}`)
	if got := res.Content[0].Text; got != "wrote a.go" {
		t.Errorf("the call: %q", got)
	}
	if p := previews["mcp__w__write"]; p == nil || p.Kind != permission.PreviewDiff || p.Text != "+++ a.go" {
		t.Errorf("preview %+v", p)
	}
	if b, _ := json.Marshal(calls); string(b) != `[{"path":"a.go","dryRun":true},{"path":"a.go"}]` {
		t.Errorf("the server saw %s", b)
	}
	e.mustCall(nil, "mcp__w__plain", `{}`)
	if p, ok := previews["mcp__w__plain"]; !ok || p != nil {
		t.Errorf("plain: preview %+v, asked %v", p, ok)
	}
}
