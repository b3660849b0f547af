package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/elicitation"
	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/sampling"
	"github.com/cordisgo/harness/testkit/mcptest"
)

// multiSelect is a form with a titled multi-select (SEP-1330) and a titled single choice,
// as a server sends it.
const multiSelect = `{"type":"object","properties":{` +
	`"colours":{"type":"array","title":"Colours","description":"Pick some","minItems":1,"maxItems":2,` +
	`"items":{"anyOf":[{"const":"r","title":"Red"},{"const":"g","title":"Green"},{"const":"b","title":"Blue"}]},"default":["r"]},` +
	`"size":{"type":"string","title":"Size","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}]}},` +
	`"required":["colours"]}`

// formServer asks its caller multiSelect in its tool pick, and answers with the action and
// content it got, as JSON.
func formServer(t *testing.T) string {
	t.Helper()
	h := mcptest.NewHTTP(t, func() *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "forms", Version: "1"}, nil)
		mcp.AddTool(s, &mcp.Tool{Name: "pick"}, func(cx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			res, err := req.Session.Elicit(cx, &mcp.ElicitParams{Message: "Pick", RequestedSchema: json.RawMessage(multiSelect)})
			if err != nil {
				return nil, nil, err
			}
			b, _ := json.Marshal(map[string]any{"action": res.Action, "content": res.Content})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
		})
		return s
	})
	return h.URL()
}

// TestElicitationPassesThrough: a form reaches the downstream session as the server sent it
// (the titled multi-select included), and the session's answer reaches the server as given:
// an accept with a field the form does not have stays an accept with that field.
func TestElicitationPassesThrough(t *testing.T) {
	root := newTree(t)
	mountHTTP(t, root, "forms", formServer(t))
	f := serveGateway(t, root, gateway.Options{})
	for _, rt := range []struct{ path, tool string }{{"/mcp", "mcp__forms__pick"}, {"/mcp/servers/forms", "pick"}} {
		var got json.RawMessage
		c := mcp.NewClient(&mcp.Implementation{Name: "picker", Version: "1"}, &mcp.ClientOptions{
			ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				got, _ = json.Marshal(r.Params.RequestedSchema)
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"colours": []any{"g", "b"}, "size": "l", "extra": "kept"}}, nil
			},
		})
		cs := dial(t, c, f.url+rt.path, nil)
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: rt.tool})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %s", rt.path, err, text(res))
		}
		if !mcptest.SameJSON(t, got, []byte(multiSelect)) {
			t.Errorf("%s: the session was shown\n%s\nwant the server's\n%s", rt.path, got, multiSelect)
		}
		want := `{"action":"accept","content":{"colours":["g","b"],"extra":"kept","size":"l"}}`
		if !mcptest.SameJSON(t, []byte(text(res)), []byte(want)) {
			t.Errorf("%s: the server got %s, want %s", rt.path, text(res), want)
		}
		_ = cs.Close()
	}
}

// TestCompletionErrorCodes: completions the gateway cannot route are JSON-RPC errors with
// the invalid-params code and the name asked for. (A per-server route passes what its
// server answers, as a direct connection would.)
func TestCompletionErrorCodes(t *testing.T) {
	f := demoFleet(t)
	for _, path := range []string{"/mcp"} {
		cs := connect(t, f.url+path, nil)
		_, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "no_such_prompt"},
			Argument: mcp.CompleteParamsArgument{Name: "x", Value: ""}})
		var we *jsonrpc.Error
		if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams || !strings.Contains(we.Message, "no_such_prompt") {
			t.Errorf("%s: completion of an unknown prompt: %v, want code %d naming it", path, err, jsonrpc.CodeInvalidParams)
		}
	}
}

// On protocol 2026-07-28 sessions (input requests in results), resource reads and prompts
// put their server requests to the calling session as tool calls do, and the progress a
// server reports after an input round reaches the session with its token.
func TestRoundsReadsPromptsProgress(t *testing.T) {
	f := newAskFleet(t, nil)
	for _, rt := range f.servers(t) {
		t.Run(rt.name, func(t *testing.T) {
			a, b := &asker{name: "alice"}, &asker{name: "bob"}
			progress := make(chan *mcp.ProgressNotificationParams, 4)
			as := a.connectLatestWith(t, rt.srv, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
					progress <- r.Params
					f.progressed <- struct{}{}
				},
			})
			b.connectLatest(t, rt.srv)
			if v := as.InitializeResult().ProtocolVersion; v < "2026-07-28" {
				t.Fatalf("protocol %s, want input requests", v)
			}
			res, err := as.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "ask://me"})
			if err != nil || res.Contents[0].Text != `accept {"name":"alice"}` {
				t.Fatalf("read: %v %+v", err, res)
			}
			pr, err := as.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: rt.prefix + "whoami"})
			if err != nil || pr.Messages[0].Content.(*mcp.TextContent).Text != `accept {"name":"alice"}` {
				t.Fatalf("prompt: %v %+v", err, pr)
			}
			p := &mcp.CallToolParams{Name: rt.prefix + "steps"}
			p.SetProgressToken("steps-1")
			cr, err := as.CallTool(t.Context(), p)
			if err != nil || text(cr) != `accept {"name":"alice"}` {
				t.Fatalf("steps: %v %+v", err, cr)
			}
			if got := <-progress; got.ProgressToken != "steps-1" || got.Message != "asked" {
				t.Fatalf("progress %+v", got)
			}
			if a.elicited.Load() != 3 || b.elicited.Load() != 0 {
				t.Fatalf("elicitations: alice %d, bob %d", a.elicited.Load(), b.elicited.Load())
			}
		})
	}
}

// TestRoundStateBelongsToItsRequest: a round's request state resumes only the request
// that started it. Handed to another method (a resource read), or to the same method for
// another tool, it is refused as invalid params, and the gateway goes on: the round it
// names is still there for its own retry.
func TestRoundStateBelongsToItsRequest(t *testing.T) {
	f := newAskFleet(t, nil)
	for _, rt := range f.servers(t) {
		t.Run(rt.name, func(t *testing.T) {
			a := &asker{name: "alice"}
			as := a.connectLatestWith(t, rt.srv, &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
			first, err := as.CallTool(t.Context(), &mcp.CallToolParams{Name: rt.prefix + "ask"})
			if err != nil || first.RequestState == "" || len(first.InputRequests) != 1 {
				t.Fatalf("first round: %v %+v", err, first)
			}
			answers := mcp.InputResponseMap{"gateway": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "alice"}}}
			_, err = as.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "ask://me", RequestState: first.RequestState, InputResponses: answers})
			if err == nil || !strings.Contains(err.Error(), "the request state belongs to tools/call mcp__ask__ask") {
				t.Fatalf("the call's state on a read: %v", err)
			}
			_, err = as.CallTool(t.Context(), &mcp.CallToolParams{Name: rt.prefix + "steps", RequestState: first.RequestState, InputResponses: answers})
			if err == nil || !strings.Contains(err.Error(), "the request state belongs to tools/call mcp__ask__ask") {
				t.Fatalf("the call's state on another tool: %v", err)
			}
			res, err := as.CallTool(t.Context(), &mcp.CallToolParams{Name: rt.prefix + "ask", RequestState: first.RequestState, InputResponses: answers})
			if err != nil || text(res) != `accept {"name":"alice"}` {
				t.Fatalf("the call's own retry: %v %+v", err, res)
			}
		})
	}
}

// TestAbandonedRoundEnds: a round whose retry never comes ends with the gateway. The
// server's question, which nobody will answer now, is given up, so the upstream client's
// connection can close and the tree disposes (it waited for ever for that question).
func TestAbandonedRoundEnds(t *testing.T) {
	f := newAskFleet(t, nil)
	a := &asker{name: "alice"}
	as := a.connectLatestWith(t, f.gw.Aggregated(), &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
	first, err := as.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp__ask__ask"})
	if err != nil || first.RequestState == "" {
		t.Fatalf("first round: %v %+v", err, first)
	}
	if err := f.gw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.root.Scope().Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatalf("the tree did not dispose after an abandoned round: %v", err)
	}
}

// TestGatewayMadeLate: a gateway made after the fleet connected (no offer before it) needs
// no preparation: its upstream clients reconnect once to declare elicitation, and a form
// then reaches the calling downstream session.
func TestGatewayMadeLate(t *testing.T) {
	root := ctx.New(ctx.Options{Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { _ = root.Scope().Dispose(context.Background()) })
	ctxtest.MountActive(t, root, toolregistry.Plugin, nil)
	statuses := ctxtest.Record(t, root, mcpclient.StatusEvent)
	mountHTTP(t, root, "forms", formServer(t))
	connected := func(all []mcpclient.Status) int {
		n := 0
		for _, st := range all {
			if st.Phase == mcpclient.PhaseConnected {
				n++
			}
		}
		return n
	}
	before := connected(statuses.Events())
	f := serveGateway(t, root, gateway.Options{})
	statuses.WaitFor(t, func(all []mcpclient.Status) bool { return connected(all) > before })
	c := mcp.NewClient(&mcp.Implementation{Name: "picker", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"colours": []any{"r"}}}, nil
		},
	})
	got := call(t, dial(t, c, f.url+"/mcp/servers/forms", nil), "pick")
	if want := `{"action":"accept","content":{"colours":["r"]}}`; !mcptest.SameJSON(t, []byte(got), []byte(want)) {
		t.Errorf("the server got %s, want %s", got, want)
	}
}

// TestOfferIsOneStep: when gateway.Offer announces either offer, both are in place, so a
// client that hears the first announcement reconnects once, declaring elicitation and
// sampling; announced one by one, it could reconnect between them and then again (the
// per-server route answered 503 meanwhile: TestGatewayMadeLate and Example failed 1 run
// in 15-60).
func TestOfferIsOneStep(t *testing.T) {
	root := ctx.New(ctx.Options{Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { _ = root.Scope().Dispose(context.Background()) })
	var heard []string
	inPlace := func(kind string) error {
		heard = append(heard, fmt.Sprintf("%s: elicitation %v, sampling %v", kind, elicitation.Modes(root), sampling.Available(root)))
		return nil
	}
	if _, err := elicitation.ChangedEvent.On(root, func(elicitation.Change) error { return inPlace("elicitation") }); err != nil {
		t.Fatal(err)
	}
	if _, err := sampling.ChangedEvent.On(root, func(sampling.Change) error { return inPlace("sampling") }); err != nil {
		t.Fatal(err)
	}
	if err := gateway.Offer(root); err != nil {
		t.Fatal(err)
	}
	want := []string{"elicitation: elicitation [form url], sampling true", "sampling: elicitation [form url], sampling true"}
	if !slices.Equal(heard, want) {
		t.Errorf("announced as %q, want %q", heard, want)
	}
}

// sep1330Strict is a titled multi-select as go-sdk's conformance server sends it (SEP-1330):
// its items say "type": "string" beside their anyOf, which go-sdk's own schema check
// refuses, while the specification allows it.
const sep1330Strict = `{"type":"object","properties":{` +
	`"colours":{"type":"array","title":"Colours","items":{"type":"string","anyOf":[{"const":"r","title":"Red"},{"const":"g","title":"Green"}]}}},` +
	`"required":["colours"]}`

// TestTitledMultiSelectAnswerForwarded (issue 38, item 8): when the calling session's client
// accepts a titled multi-select that go-sdk's own check refuses, the server receives what
// the user answered, never a decline invented by the gateway. The server here records the
// answer as it arrives (its own go-sdk check refuses it too, after the fact), and the
// downstream client answers the form itself, as a client whose SDK reads the specification's
// shapes does.
func TestTitledMultiSelectAnswerForwarded(t *testing.T) {
	type answerKey struct{}
	h := mcptest.NewHTTP(t, func() *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "forms", Version: "1"}, nil)
		s.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(cx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				res, err := next(cx, method, req)
				if got, ok := cx.Value(answerKey{}).(*mcp.Result); ok && err == nil {
					*got = res
				}
				return res, err
			}
		})
		mcp.AddTool(s, &mcp.Tool{Name: "pick"}, func(cx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			var got mcp.Result
			_, err := req.Session.Elicit(context.WithValue(cx, answerKey{}, &got), &mcp.ElicitParams{Message: "Pick", RequestedSchema: json.RawMessage(sep1330Strict)})
			if got == nil {
				return nil, nil, fmt.Errorf("no answer: %w", err)
			}
			b, _ := json.Marshal(got)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
		})
		return s
	})
	root := newTree(t)
	mountHTTP(t, root, "forms", h.URL())
	f := serveGateway(t, root, gateway.Options{})
	c := mcp.NewClient(&mcp.Implementation{Name: "picker", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("not reached: the middleware answers")
		},
	})
	var shown json.RawMessage
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(cx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.ElicitRequest); ok {
				shown, _ = json.Marshal(r.Params.RequestedSchema)
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"colours": []any{"g"}}}, nil
			}
			return next(cx, method, req)
		}
	})
	got := call(t, dial(t, c, f.url+"/mcp/servers/forms", nil), "pick")
	if !mcptest.SameJSON(t, shown, []byte(sep1330Strict)) {
		t.Errorf("the session was shown\n%s\nwant the server's\n%s", shown, sep1330Strict)
	}
	if want := `{"action":"accept","content":{"colours":["g"]}}`; !mcptest.SameJSON(t, []byte(got), []byte(want)) {
		t.Errorf("the server got %s, want %s (what the user answered)", got, want)
	}
}
