package demoserver

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAskForm: the ask tool requests its form (required fields first, defaults, titled
// choices, a write-only token) and reports the answer, the token by its length only.
func TestAskForm(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transport) {
		var got *mcp.ElicitParams
		answer := &mcp.ElicitResult{Action: "accept", Content: map[string]any{
			"name": "Grace", "age": 85.0, "color": "blue", "subscribe": true, "token": "s3cret"}}
		cs := tr.connect(t, Options{}, &mcp.ClientOptions{
			ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				got = r.Params
				return answer, nil
			},
		})
		res := callTool(t, cs, "ask", map[string]any{})
		if want := "accept: age=85, color=blue, name=Grace, subscribe=true, token=6 characters"; text(t, res) != want {
			t.Fatalf("ask = %q, want %q", text(t, res), want)
		}
		if got == nil || got.Mode != "form" || got.Message == "" {
			t.Fatalf("elicitation params = %+v", got)
		}
		schema := toSchema(t, got.RequestedSchema)
		if p := schema.Properties["token"]; p == nil || !p.WriteOnly {
			t.Errorf("token property = %+v, want writeOnly", p)
		}
		if p := schema.Properties["color"]; p == nil || len(p.OneOf) != 3 || string(p.Default) != `"green"` {
			t.Errorf("color property = %+v, want three titled choices, default green", p)
		}

		answer = &mcp.ElicitResult{Action: "decline"}
		if res := callTool(t, cs, "ask", map[string]any{"mode": "form"}); text(t, res) != "decline" {
			t.Errorf("declined ask = %q", text(t, res))
		}
	})
}

// TestAskURL: in url mode the tool asks for a page with an ID and, once accepted, reports
// that elicitation complete before it returns.
func TestAskURL(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transport) {
		var asked *mcp.ElicitParams
		completed := make(chan string, 1)
		cs := tr.connect(t, Options{}, &mcp.ClientOptions{
			Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
			ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked = r.Params
				return &mcp.ElicitResult{Action: "accept"}, nil
			},
			ElicitationCompleteHandler: func(_ context.Context, r *mcp.ElicitationCompleteNotificationRequest) {
				completed <- r.Params.ElicitationID
			},
		})
		res := callTool(t, cs, "ask", map[string]any{"mode": "url"})
		if asked == nil || asked.Mode != "url" || asked.ElicitationID == "" || !strings.HasSuffix(asked.URL, "?id="+asked.ElicitationID) {
			t.Fatalf("elicitation params = %+v", asked)
		}
		if id := receive(t, completed, "elicitation/complete"); id != asked.ElicitationID {
			t.Errorf("completed %q, want %q", id, asked.ElicitationID)
		}
		if want := "accept: confirmed " + asked.ElicitationID; text(t, res) != want {
			t.Errorf("ask = %q, want %q", text(t, res), want)
		}
	})
}

// TestAskWithoutElicitation: a client without the capability cannot answer, and the call
// fails saying so.
func TestAskWithoutElicitation(t *testing.T) {
	cs := connectMemory(t, New(Options{}), nil, "")
	_, err := cs.CallTool(testContext(t), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "does not support elicitation") {
		t.Fatalf("ask without elicitation: err = %v, want one saying the client does not support elicitation", err)
	}
}
