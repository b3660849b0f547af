package toolregistry_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// TestPolicyRequestPreview: an approver reads what the call would do from the tool's
// Preview, given the call's arguments, before the tool runs; a tool without one has none.
func TestPolicyRequestPreview(t *testing.T) {
	root, reg := newRegistry(t, nil)
	ran := false
	for _, tl := range []toolregistry.Tool{
		{Name: "write", Execute: func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
			ran = true
			return toolregistry.TextResult("written"), nil
		}, Preview: func(_ context.Context, args json.RawMessage) (*permission.Preview, error) {
			if ran {
				t.Error("the preview came after the call")
			}
			return &permission.Preview{Kind: permission.PreviewDiff, Text: "+" + string(args)}, nil
		}},
		{Name: "plain", Execute: func(context.Context, *toolregistry.Call) (*toolregistry.Result, error) {
			return toolregistry.TextResult("done"), nil
		}},
	} {
		if _, err := reg.Register(root, tl); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := toolregistry.Policy.On(root, func(*toolregistry.PolicyRequest, func() (permission.Decision, error)) (permission.Decision, error) {
		return permission.Decision{Action: permission.Ask}, nil
	}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]*permission.Preview{}
	if _, err := toolregistry.ApprovalKey.Provide(root, toolregistry.ApproverFunc(func(cx context.Context, req *toolregistry.PolicyRequest, _ string) (toolregistry.Approval, error) {
		p, err := req.Preview(cx)
		seen[req.Tool.Name] = p
		return toolregistry.Approval{Approved: true}, err
	})); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"write", "plain"} {
		if _, err := reg.Execute(t.Context(), root, name, json.RawMessage(`{"x":1}`), toolregistry.ExecOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if p := seen["write"]; p == nil || p.Kind != "diff" || p.Text != `+{"x":1}` {
		t.Errorf("write's preview %+v", p)
	}
	if p, ok := seen["plain"]; !ok || p != nil {
		t.Errorf("plain's preview %+v (asked: %v)", p, ok)
	}
}
