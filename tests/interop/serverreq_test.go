//go:build unix

package interop

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/elicitation"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/sampling"
	"github.com/cordisgo/harness/testkit/elicittest"
)

// The reference server's triggers of server requests, registered only for clients that
// advertise the capability.
const (
	elicitTool   = "trigger-elicitation-request"
	urlTool      = "trigger-url-elicitation"
	samplingTool = "trigger-sampling-request"
)

// answering returns a test responder for modes: it records the requests it gets and
// answers with answer.
func answering(modes []elicitation.Mode, answer func(*elicitation.Request) *elicitation.Response) *elicittest.Recorder {
	return &elicittest.Recorder{Modes: modes, Answer: func(_ context.Context, req *elicitation.Request) (*elicitation.Response, error) {
		return answer(req), nil
	}}
}

// stdioConfig is the reference server over stdio.
func stdioConfig(srv server) mcpclient.Config {
	cfg := newConfig(mcpclient.TransportStdio)
	cfg.Command = srv.node
	cfg.Args = []string{srv.entry, "stdio"}
	return cfg
}

// TestEverythingServerRequests: the reference server's elicitation and sampling triggers
// against the harness's responders. With none, the capabilities are not advertised and the
// server does not offer the triggers; with the defaults policy its form (whose required name
// has no default) is declined; a responder's answer, and a sampler's text, come back in the
// tools' results; URL mode reaches a responder that takes URLs.
func TestEverythingServerRequests(t *testing.T) {
	srv := locate(t)

	t.Run("no responder", func(t *testing.T) {
		e := mount(t, stdioConfig(srv))
		tools := e.serverTools()
		for _, raw := range []string{elicitTool, urlTool, samplingTool} {
			if slices.Contains(tools, public(raw)) {
				t.Errorf("%s offered to a client without the capability: %v", raw, tools)
			}
		}
	})

	t.Run("defaults policy", func(t *testing.T) {
		root := ctxtest.New(t)
		if _, err := elicitation.Provide(root, "defaults", elicitation.Defaults{}); err != nil {
			t.Fatal(err)
		}
		e := mountOn(t, root, stdioConfig(srv))
		tools := e.serverTools()
		if !slices.Contains(tools, public(elicitTool)) || slices.Contains(tools, public(urlTool)) {
			t.Fatalf("with a form-only responder the tools are %v, want %s and not %s", tools, elicitTool, urlTool)
		}
		res := e.call(t, public(elicitTool), `{}`)
		if !strings.Contains(res.Text(), "User declined to provide the requested information") {
			t.Fatalf("result %q: want a decline (the required name has no default)", res.Text())
		}
	})

	t.Run("responder", func(t *testing.T) {
		root := ctxtest.New(t)
		r := answering([]elicitation.Mode{elicitation.ModeForm, elicitation.ModeURL}, func(req *elicitation.Request) *elicitation.Response {
			if req.Mode == elicitation.ModeURL {
				return &elicitation.Response{Action: elicitation.Accept}
			}
			content := map[string]any{"name": "Ada Lovelace", "integer": 7.0}
			for _, f := range req.Form.Fields {
				if _, set := content[f.Name]; !set && f.Default != nil {
					content[f.Name] = f.Default
				}
			}
			return &elicitation.Response{Action: elicitation.Accept, Content: content}
		})
		if _, err := elicitation.Provide(root, "test", r); err != nil {
			t.Fatal(err)
		}
		e := mountOn(t, root, stdioConfig(srv))

		res := e.call(t, public(elicitTool), `{}`)
		for _, want := range []string{"User provided the requested information", "- Name: Ada Lovelace", "- Favorite Integer: 7", "- Favorite Number: 3.14"} {
			if !strings.Contains(res.Text(), want) {
				t.Errorf("result lacks %q:\n%s", want, res.Text())
			}
		}
		seen := r.Requests()
		if len(seen) != 1 || seen[0].Server != serverName || seen[0].Call == nil || seen[0].Message != "Please provide inputs for the following fields:" {
			t.Fatalf("requests %+v", seen)
		}
		// Every kind of field of the server's form parsed, with titles and defaults.
		fields := map[string]elicitation.Field{}
		for _, f := range seen[0].Form.Fields {
			fields[f.Name] = f
		}
		if f := seen[0].Form.Fields[0]; f.Name != "name" || !f.Required {
			t.Errorf("first field %+v, want the required name", f)
		}
		if f := fields["legacyTitledEnum"]; f.Kind != elicitation.Choice || len(f.Options) != 5 || f.Options[0].Title != "Cats" || f.Default != "pet-1" {
			t.Errorf("legacy titled enum %+v", f)
		}
		if f := fields["titledMultipleSelectEnum"]; f.Kind != elicitation.Multi || len(f.Options) != 3 || f.Options[1].Title != "Salmon" || f.MaxItems == nil || *f.MaxItems != 3 {
			t.Errorf("titled multiple select %+v", f)
		}
		if f := fields["integer"]; f.Kind != elicitation.Integer || f.Minimum == nil || *f.Maximum != 100 || f.Default != 42.0 {
			t.Errorf("integer %+v", f)
		}
		if f := fields["email"]; f.Format != "email" {
			t.Errorf("email %+v", f)
		}

		res = e.call(t, public(urlTool), `{"url": "https://example.com/authorize", "elicitationId": "e-1"}`)
		if !strings.Contains(res.Text(), "User completed the URL elicitation flow") || !strings.Contains(res.Text(), "Elicitation ID: e-1") {
			t.Fatalf("URL result %q", res.Text())
		}
		seen = r.Requests()
		if last := seen[len(seen)-1]; last.Mode != elicitation.ModeURL || last.URL != "https://example.com/authorize" || last.ID != "e-1" {
			t.Fatalf("URL request %+v", last)
		}
	})

	t.Run("invalid answer refused", func(t *testing.T) {
		root := ctxtest.New(t)
		r := answering([]elicitation.Mode{elicitation.ModeForm}, func(*elicitation.Request) *elicitation.Response {
			return &elicitation.Response{Action: elicitation.Accept, Content: map[string]any{"name": "Ada", "integer": 500.0}}
		})
		if _, err := elicitation.Provide(root, "test", r); err != nil {
			t.Fatal(err)
		}
		e := mountOn(t, root, stdioConfig(srv))
		res := e.call(t, public(elicitTool), `{}`)
		if !strings.Contains(res.Text(), "User declined") {
			t.Fatalf("result %q: an answer out of the schema must never reach the server", res.Text())
		}
	})

	t.Run("sampling", func(t *testing.T) {
		root := ctxtest.New(t)
		var got *sampling.Request
		s := sampling.Func(func(_ context.Context, r *sampling.Request) (*mcp.CreateMessageResult, error) { //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
			got = r
			return &mcp.CreateMessageResult{Role: "assistant", Model: "test-model", Content: &mcp.TextContent{Text: "forty-two"}}, nil //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
		})
		if _, err := sampling.Provide(root, "test", s); err != nil {
			t.Fatal(err)
		}
		e := mountOn(t, root, stdioConfig(srv))
		res := e.call(t, public(samplingTool), `{"prompt": "the answer", "maxTokens": 20}`)
		text := res.Text()
		if !strings.Contains(text, "LLM sampling result") || !strings.Contains(text, `"forty-two"`) || !strings.Contains(text, `"test-model"`) {
			t.Fatalf("result %q", text)
		}
		if got == nil || got.Server != serverName || got.Params.MaxTokens != 20 || len(got.Params.Messages) != 1 {
			t.Fatalf("sampler request %+v", got)
		}
		msg, _ := json.Marshal(got.Params.Messages[0].Content)
		if !strings.Contains(string(msg), "the answer") || got.Params.SystemPrompt != "You are a helpful test server." {
			t.Errorf("sampler got message %s, system prompt %q", msg, got.Params.SystemPrompt)
		}
	})
}
