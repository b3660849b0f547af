//go:build unix

package interop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/elicitation"
	"github.com/cordisgo/harness/plugins/console"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/sampling"
)

// The reference server's task tools (MCP's tasks utility, protocol 2025-11-25).
const (
	researchTool     = "simulate-research-query"
	asyncSampling    = "trigger-sampling-request-async"
	asyncElicitation = "trigger-elicitation-request-async"
)

// TestEverythingTasks: the reference server's task tools, over stdio and Streamable HTTP.
// simulate-research-query requires a task: the client calls it as one, follows its status
// as progress, and when the server needs a clarification (ambiguous: true) reads the
// result with tasks/result, during which the server's question, related to the task,
// reaches the responder and its answer the report. The async triggers make the client run
// the server's sampling and elicitation requests as tasks, which the server polls.
func TestEverythingTasks(t *testing.T) {
	srv := locate(t)
	for _, tr := range []string{mcpclient.TransportStdio, mcpclient.TransportStreamableHTTP} {
		t.Run(tr, func(t *testing.T) {
			cfg := stdioConfig(srv)
			if tr == mcpclient.TransportStreamableHTTP {
				cfg = newConfig(tr)
				cfg.URL = startHTTPServer(t, srv).url
			}
			root := ctxtest.New(t)
			r := answering([]elicitation.Mode{elicitation.ModeForm}, func(req *elicitation.Request) *elicitation.Response {
				switch {
				case hasField(req, "interpretation"):
					return &elicitation.Response{Action: elicitation.Accept, Content: map[string]any{"interpretation": "snake"}}
				case hasField(req, "favoriteColor"):
					return &elicitation.Response{Action: elicitation.Accept, Content: map[string]any{"name": "Ada", "favoriteColor": "Green", "agreeToTerms": true}}
				}
				return &elicitation.Response{Action: elicitation.Decline}
			})
			if _, err := elicitation.Provide(root, "test", r); err != nil {
				t.Fatal(err)
			}
			var sampled sync.WaitGroup
			sampled.Add(1)
			var once sync.Once
			s := sampling.Func(func(_ context.Context, r *sampling.Request) (*mcp.CreateMessageResult, error) { //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
				once.Do(sampled.Done)
				return &mcp.CreateMessageResult{Role: "assistant", Model: "test-model", Content: &mcp.TextContent{Text: "forty-two"}}, nil //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
			})
			if _, err := sampling.Provide(root, "test", s); err != nil {
				t.Fatal(err)
			}
			progress := ctxtest.Record(t, root, mcpclient.ProgressEvent)
			e := mountOn(t, root, cfg)

			res := e.call(t, public(researchTool), `{"topic": "python", "ambiguous": true}`)
			text := res.Text()
			for _, want := range []string{"# Research Report: python (snake)", "**Clarification**: snake", "`input_required`"} {
				if !strings.Contains(text, want) {
					t.Errorf("report lacks %q:\n%s", want, text)
				}
			}
			var asked *elicitation.Request
			for _, q := range r.Requests() {
				if hasField(q, "interpretation") {
					asked = q
				}
			}
			if asked == nil || asked.Call == nil || !strings.Contains(asked.Message, `"python" could have multiple interpretations`) {
				t.Fatalf("the clarifying question %+v", asked)
			}
			var statuses []string
			for _, p := range progress.Events() {
				if p.Target == researchTool && p.Message != "" {
					statuses = append(statuses, p.Message)
				}
			}
			if !containsPrefix(statuses, "task working: Gathering sources") || !containsPrefix(statuses, "task input_required") {
				t.Errorf("the task's status as progress: %q", statuses)
			}

			res = e.call(t, public(asyncSampling), `{"prompt": "the answer", "maxTokens": 20}`)
			if text := res.Text(); !strings.Contains(text, "[COMPLETED] Async sampling completed!") || !strings.Contains(text, "forty-two") || !strings.Contains(text, "Task created: harness-") {
				t.Fatalf("async sampling:\n%s", text)
			}
			sampled.Wait()

			res = e.call(t, public(asyncElicitation), `{}`)
			if text := res.Text(); !strings.Contains(text, "[COMPLETED] User provided the requested information!") || !strings.Contains(text, "- Name: Ada") || !strings.Contains(text, "- Favorite Color: Green") {
				t.Fatalf("async elicitation:\n%s", text)
			}
		})
	}
}

// containsPrefix reports whether some string of ss starts with prefix.
func containsPrefix(ss []string, prefix string) bool {
	for _, s := range ss {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// hasField reports whether r's form has a field called name.
func hasField(r *elicitation.Request, name string) bool {
	if r.Form == nil {
		return false
	}
	for _, f := range r.Form.Fields {
		if f.Name == name {
			return true
		}
	}
	return false
}

// TestEverythingTaskCancelled: a task whose caller goes away (Ctrl-C, a cancelled turn) is
// cancelled on the server with tasks/cancel, and the call ends at once with the caller.
func TestEverythingTaskCancelled(t *testing.T) {
	srv := locate(t)
	p, cfg := stdioTap(t, srv)
	root := ctxtest.New(t)
	cx, cancel := context.WithCancel(ctxtest.Wait(t))
	defer cancel()
	if _, err := mcpclient.ProgressEvent.On(root, func(pr mcpclient.Progress) error {
		if pr.Target == researchTool && strings.HasPrefix(pr.Message, "task working") {
			cancel()
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	e := mountOn(t, root, cfg)
	// Through the tap the task tool comes with the server's tools/list_changed.
	e.changes.WaitFor(t, func([]toolregistry.Change) bool { return slices.Contains(e.serverTools(), public(researchTool)) })
	_, err := e.reg.Execute(cx, e.root, public(researchTool), json.RawMessage(`{"topic": "tides"}`), toolregistry.ExecOptions{})
	if !errors.Is(err, toolregistry.ErrCancelled) {
		t.Fatalf("the cancelled call: %v, want ErrCancelled", err)
	}
	p.waitFor(t, "tasks/cancel", func(evs []event) bool {
		return slices.ContainsFunc(evs, func(e event) bool { return e.Method == "tasks/cancel" })
	})
}

// TestEverythingTaskPageForm: the clarifying question of a task reaches the management
// page's form (the console's console/elicitations stream) like any other question, and
// the page's answer (console/answer) is the one the task goes on with.
func TestEverythingTaskPageForm(t *testing.T) {
	srv := locate(t)
	root := ctxtest.New(t)
	ctxtest.Mount(t, root, console.Plugin, nil) // active once mountOn provides the tools service
	e := mountOn(t, root, stdioConfig(srv))
	stream, ok := root.RemoteMethod("console/elicitations")
	answer, ok2 := root.RemoteMethod("console/answer")
	if !ok || !ok2 {
		t.Fatal("the console exposes no console/elicitations or console/answer")
	}
	scx, stop := context.WithCancel(ctxtest.Wait(t))
	defer stop()
	shown := make(chan console.Elicitation, 4)
	ended := make(chan error, 1)
	go func() {
		ended <- stream.Stream(scx, nil, func(v any) error {
			if q := v.(console.Elicitation); q.Type == "pending" {
				shown <- q
			}
			return nil
		})
	}()
	answered := make(chan error, 1)
	go func() {
		q := <-shown
		if len(q.Fields) != 1 || q.Fields[0].Name != "interpretation" || len(q.Fields[0].Options) != 3 {
			answered <- fmt.Errorf("the page was shown %+v", q)
			return
		}
		params, _ := json.Marshal(console.AnswerParams{ID: q.ID, Action: elicitation.Accept, Content: map[string]any{"interpretation": "comedy"}})
		_, err := answer.Call(scx, params)
		answered <- err
	}()
	res := e.call(t, public(researchTool), `{"topic": "python", "ambiguous": true}`)
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text(), "# Research Report: python (comedy)") {
		t.Fatalf("report:\n%s", res.Text())
	}
	stop()
	if err := <-ended; err == nil {
		t.Error("the page's stream ended without the cancellation")
	}
}
