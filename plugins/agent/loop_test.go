package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/plugins/agent"
	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/model/openaicompat"
	"github.com/cordisgo/harness/plugins/sysprompt"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/secrets"
	"github.com/cordisgo/harness/testkit/demotree"
)

// env is a tree with the tool registry, the system prompt, a model service whose one model
// ("default") is the real Chat Completions provider talking to a local modeltest server,
// the agent, and a client of the demo MCP server.
type env struct {
	t    *testing.T
	root *ctx.Context
	srv  *modeltest.Server
	svc  *agent.Service
	dir  string
}

type envOptions struct {
	model modeltest.Options
	// agent is the top-level agent's configuration (sessionsDir defaults to a temp dir).
	agent map[string]any
	// before runs on the root before the demo client connects.
	before func(root *ctx.Context) error
	// chat adjusts the provider's configuration.
	chat func(*openaicompat.ChatConfig)
	// scrubber, when set, is provided in the root as the host's (secrets.ScrubberKey)
	// before anything mounts.
	scrubber *secrets.Scrubber
}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	e := &env{t: t, srv: modeltest.New(t, o.model), dir: t.TempDir()}
	cc := openaicompat.ChatConfig{Name: "default", Provider: openaicompat.ProviderDeepSeek, BaseURL: e.srv.URL, APIKey: e.srv.Key,
		RetryBase: time.Millisecond}
	if o.chat != nil {
		o.chat(&cc)
	}
	chat, err := openaicompat.NewChat(cc)
	if err != nil {
		t.Fatal(err)
	}
	cfg := map[string]any{"sessionsDir": e.dir}
	for k, v := range o.agent {
		cfg[k] = v
	}
	tree, err := demotree.StartWith("demo", demotree.Options{BeforeClient: func(root *ctx.Context) error {
		if o.scrubber != nil {
			if _, err := secrets.ScrubberKey.Provide(root, o.scrubber); err != nil {
				return err
			}
		}
		if _, err := model.Key.Provide(root, model.NewService(map[string]model.Model{"default": chat}, "")); err != nil {
			return err
		}
		for _, p := range []struct {
			def ctx.PluginDef
			cfg any
		}{{sysprompt.Plugin, map[string]any{"preamble": "You are a test agent."}}, {agent.Plugin, cfg}} {
			if _, err := root.Plugin(p.def, p.cfg); err != nil {
				return err
			}
		}
		if o.before != nil {
			if err := o.before(root); err != nil {
				return err
			}
		}
		return root.Settle(ctxtest.Wait(t))
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tree.Close)
	e.root = tree.Root
	ctxtest.Settle(t, e.root)
	svc, ok := agent.Key.Get(e.root)
	if !ok {
		t.Fatal("no agent service")
	}
	e.svc = svc
	return e
}

func (e *env) start(opts agent.StartOptions) *agent.Session {
	e.t.Helper()
	s, err := e.svc.Start(opts)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = s.Close() })
	return s
}

// resume resumes session id; it is closed when the test ends.
func (e *env) resume(id string) *agent.Session {
	e.t.Helper()
	r, err := e.svc.Resume(id, agent.StartOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = r.Close() })
	return r
}

// reopen closes s and resumes it, as a person does who quits and comes back.
func (e *env) reopen(s *agent.Session) *agent.Session {
	e.t.Helper()
	if err := s.Close(); err != nil {
		e.t.Fatal(err)
	}
	return e.resume(s.ID())
}

func (e *env) send(s *agent.Session, text string) *session.TurnEnd {
	e.t.Helper()
	end, err := s.Send(ctxtest.Wait(e.t), text)
	if err != nil {
		e.t.Fatalf("send %q: %v", text, err)
	}
	return end
}

// onEvent calls fn with every event of s, from the first, on a goroutine of its own, until
// the test ends.
func onEvent(t *testing.T, s *agent.Session, fn func(session.Event)) {
	sub := s.Subscribe(0)
	t.Cleanup(sub.Close)
	go func() {
		for {
			ev, err := sub.Next(context.Background())
			if err != nil {
				return
			}
			fn(ev)
		}
	}()
}

func call(name, args string) modeltest.ToolCall {
	return modeltest.ToolCall{Name: name, Arguments: args}
}

// toolMessages returns the tool messages of a request, in order.
func toolMessages(r modeltest.Request) []string {
	var body struct {
		Messages []struct {
			Role       string `json:"role"`
			Content    string `json:"content"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(r.Body, &body)
	var out []string
	for _, m := range body.Messages {
		if m.Role == "tool" {
			out = append(out, m.ToolCallID+"="+m.Content)
		}
	}
	return out
}

// TestLoopWithDemoServer: the model calls the demo server's tools through the registry and
// answers; the requests obey DeepSeek's rules (modeltest fails the test otherwise), the
// reasoning of a tool-call step is sent back, the calls are recorded by the registry, and
// the session is logged.
func TestLoopWithDemoServer(t *testing.T) {
	e := newEnv(t, envOptions{model: modeltest.Options{Replies: []modeltest.Reply{
		{Reasoning: "I should add.", ToolCalls: []modeltest.ToolCall{call("mcp__demo__add", `{"a": 2, "b": 40}`)}},
		{Reasoning: "Done.", Content: "The sum is 42."},
	}}})
	s := e.start(agent.StartOptions{})
	end := e.send(s, "What is 2 + 40?")
	if end.Reason != session.StopDone || end.Text != "The sum is 42." || end.Steps != 2 {
		t.Fatalf("end %+v", end)
	}
	reqs := e.srv.Accepted()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if got := toolMessages(reqs[1]); len(got) != 1 || !strings.HasSuffix(got[0], "=42") {
		t.Errorf("tool messages %v", got)
	}
	body := string(reqs[1].Body)
	if !strings.Contains(body, `"reasoning_content":"I should add."`) || !strings.Contains(body, "You are a test agent.") {
		t.Errorf("second request lacks the reasoning or the prompt: %s", body)
	}
	for _, r := range reqs {
		if len(r.Warnings) > 0 {
			t.Errorf("request %d warnings: %v", r.Index, r.Warnings)
		}
	}
	reg, _ := toolregistry.Key.Get(e.root)
	hist := reg.History()
	if len(hist) != 1 || hist[0].Tool != "mcp__demo__add" || hist[0].Outcome != toolregistry.CodeOK {
		t.Errorf("registry history %+v", hist)
	}
	// The log holds the session's durable events, in order.
	events, err := e.svc.Store().Read(s.ID())
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ev := range events {
		types = append(types, string(ev.Type))
	}
	want := []string{"session", "user", "assistant", "usage", "tool.start", "tool.result", "assistant", "usage", "turn.end"}
	if !slices.Equal(types, want) {
		t.Errorf("logged %v\nwant   %v", types, want)
	}
	list, err := e.svc.Store().List()
	if err != nil || len(list) != 1 || list[0].Turns != 1 || list[0].Title != "What is 2 + 40?" || list[0].Usage.Requests != 2 {
		t.Errorf("list %+v, %v", list, err)
	}
	// The cost at DeepSeek Flash's price: of each request's usage, summed in the turn's end
	// and the session's summary.
	flash := openaicompat.DeepSeekPrices[openaicompat.DeepSeekFlash]
	var sum float64
	for _, ev := range events {
		if ev.Type == session.EventUsage {
			if want := flash.Cost(*ev.Usage); ev.Usage.Cost != want || want == 0 {
				t.Errorf("usage %+v: cost %g, want %g", *ev.Usage, ev.Usage.Cost, want)
			}
			sum += ev.Usage.Cost
		}
	}
	if end.Usage.Cost != sum || len(list) == 1 && list[0].Usage.Cost != sum {
		t.Errorf("the turn's cost %g, the session's %+v, want %g", end.Usage.Cost, list, sum)
	}
}

// barrier makes n safe calls wait for each other: it fails the calls if they never run
// at the same time.
type probe struct {
	mu      sync.Mutex
	running int
	started []string
	both    chan struct{}
	overlap bool
}

func (p *probe) tools(need int) []toolregistry.Tool {
	safe := func(name string) toolregistry.Tool {
		return toolregistry.Tool{Name: name, Meta: map[string]string{"readOnlyHint": "true"},
			Execute: func(cx context.Context, c *toolregistry.Call) (*toolregistry.Result, error) {
				p.mu.Lock()
				p.running++
				p.started = append(p.started, c.ID)
				if p.running == need {
					close(p.both)
				}
				p.mu.Unlock()
				defer func() { p.mu.Lock(); p.running--; p.mu.Unlock() }()
				select {
				case <-p.both:
					return toolregistry.TextResult("safe " + c.ID), nil
				case <-cx.Done():
					return nil, cx.Err()
				}
			}}
	}
	exclusive := toolregistry.Tool{Name: "write", Execute: func(_ context.Context, c *toolregistry.Call) (*toolregistry.Result, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.running != 0 {
			p.overlap = true
		}
		p.started = append(p.started, c.ID)
		return toolregistry.TextResult("wrote " + c.ID), nil
	}}
	return []toolregistry.Tool{safe("look_a"), safe("look_b"), exclusive}
}

// TestSafeCallsOverlapUnsafeRunAlone: the two read-only calls of a step run at the same
// time (each waits for the other), the exclusive call waits for them and runs alone, the
// call after it starts only once it is done, and the results go back in the model's order.
func TestSafeCallsOverlapUnsafeRunAlone(t *testing.T) {
	p := &probe{both: make(chan struct{})}
	e := newEnv(t, envOptions{
		model: modeltest.Options{Replies: []modeltest.Reply{
			{ToolCalls: []modeltest.ToolCall{{ID: "c1", Name: "look_a", Arguments: "{}"}, {ID: "c2", Name: "look_b", Arguments: "{}"},
				{ID: "c3", Name: "write", Arguments: "{}"}, {ID: "c4", Name: "mcp__demo__echo", Arguments: `{"text":"after"}`}}},
			{Content: "ok"},
		}},
		agent: map[string]any{"permissions": map[string]any{"allow": []any{"write"}}},
		before: func(root *ctx.Context) error {
			reg, _ := toolregistry.Key.Get(root)
			for _, tl := range p.tools(2) {
				if _, err := reg.Register(root, tl); err != nil {
					return err
				}
			}
			return nil
		},
	})
	s := e.start(agent.StartOptions{})
	sub := s.Subscribe(0)
	defer sub.Close()
	e.send(s, "go")
	if p.overlap {
		t.Error("the exclusive call ran while a safe call was running")
	}
	if len(p.started) != 3 || p.started[2] != "c3" {
		t.Errorf("started %v", p.started)
	}
	got := toolMessages(e.srv.Accepted()[1])
	want := []string{"c1=safe c1", "c2=safe c2", "c3=wrote c3", "c4=after"}
	if !slices.Equal(got, want) {
		t.Errorf("tool messages %v, want %v", got, want)
	}
	// tool.start of c4 comes after c3's result: the exclusive call was a barrier.
	var order []string
	for {
		ev, err := sub.Next(ctxtest.Wait(t))
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == session.EventToolStart || ev.Type == session.EventToolResult {
			order = append(order, string(ev.Type)+":"+ev.Call.ID)
		}
		if ev.Type == session.EventTurnEnd {
			break
		}
	}
	i3, i4 := slices.Index(order, "tool.result:c3"), slices.Index(order, "tool.start:c4")
	if i3 < 0 || i4 < 0 || i4 < i3 || slices.Index(order, "tool.start:c3") < slices.Index(order, "tool.result:c2") {
		t.Errorf("event order %v", order)
	}
}

// TestCancelMidTurn: cancelling while a call runs ends the demo server's slow call with
// its outcome (cancelled), gives the call not started an aborted result, and the next turn's
// request is valid (every call answered).
func TestCancelMidTurn(t *testing.T) {
	e := newEnv(t, envOptions{
		model: modeltest.Options{Replies: []modeltest.Reply{
			{ToolCalls: []modeltest.ToolCall{{ID: "slow1", Name: "mcp__demo__slow", Arguments: `{"ms": 60000}`},
				{ID: "add1", Name: "mcp__demo__add_tool", Arguments: `{"name":"x"}`}}},
			{Content: "second turn"},
		}},
		agent: map[string]any{"permissions": map[string]any{"default": "allow"}},
	})
	s := e.start(agent.StartOptions{})
	onEvent(t, s, func(ev session.Event) {
		if ev.Type == session.EventToolStart && ev.Call.ID == "slow1" {
			s.Cancel()
		}
	})
	end, err := s.Send(ctxtest.Wait(t), "wait")
	if !errors.Is(err, agent.ErrCancelled) || end.Reason != session.StopCancelled {
		t.Fatalf("end %+v, %v", end, err)
	}
	hist := s.History()
	var results []string
	for _, m := range hist {
		if m.Role == model.RoleTool {
			results = append(results, m.ToolCallID+": "+m.Content)
		}
	}
	if len(results) != 2 || !strings.Contains(results[0], "cancel") || !strings.Contains(results[1], "aborted") {
		t.Fatalf("results %q", results)
	}
	if end := e.send(s, "again"); end.Text != "second turn" {
		t.Fatalf("second turn %+v", end)
	}
	if got := toolMessages(e.srv.Accepted()[1]); len(got) != 2 {
		t.Errorf("the request after the cancel answers %d calls", len(got))
	}
}

// TestCancelDuringStream: a turn cancelled while the model has not answered ends at once;
// the next turn works.
func TestCancelDuringStream(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	arrived := make(chan struct{})
	e := newEnv(t, envOptions{model: modeltest.Options{Reply: func(c *modeltest.Call) modeltest.Reply {
		if c.Index == 0 {
			close(arrived)
			return modeltest.Reply{Content: "never seen", Hold: hold}
		}
		return modeltest.Reply{Content: "fine"}
	}}})
	s := e.start(agent.StartOptions{})
	cx, cancel := context.WithCancel(ctxtest.Wait(t))
	go func() {
		<-arrived
		cancel()
	}()
	end, err := s.Send(cx, "hello")
	cancel()
	if !errors.Is(err, agent.ErrCancelled) || end.Reason != session.StopCancelled {
		t.Fatalf("end %+v, %v", end, err)
	}
	if end := e.send(s, "again"); end.Text != "fine" {
		t.Fatalf("%+v", end)
	}
}

// TestInvalidArgumentsAndUnknownTool: arguments that are not JSON and a tool that does not
// exist give the model error results; the loop goes on.
func TestInvalidArgumentsAndUnknownTool(t *testing.T) {
	e := newEnv(t, envOptions{model: modeltest.Options{Replies: []modeltest.Reply{
		{ToolCalls: []modeltest.ToolCall{{ID: "a", Name: "mcp__demo__echo", Arguments: `{"text": "unterminated`}, {ID: "b", Name: "nope", Arguments: "{}"}}},
		{Content: "sorry"},
	}}})
	s := e.start(agent.StartOptions{})
	if end := e.send(s, "try"); end.Reason != session.StopDone {
		t.Fatalf("%+v", end)
	}
	got := toolMessages(e.srv.Accepted()[1])
	if len(got) != 2 || !strings.Contains(got[0], "not valid JSON") || !strings.Contains(got[1], "nope") {
		t.Errorf("tool messages %q", got)
	}
}

// TestLargeResultSaved: a result over largeResultBytes is saved whole in the session's
// directory; the model gets a preview and reads the rest with read_tool_result.
func TestLargeResultSaved(t *testing.T) {
	e := newEnv(t, envOptions{
		model: modeltest.Options{Replies: []modeltest.Reply{
			{ToolCalls: []modeltest.ToolCall{{ID: "big1", Name: "mcp__demo__big", Arguments: `{"bytes": 30000}`}}},
			{ToolCalls: []modeltest.ToolCall{{ID: "rd", Name: "read_tool_result", Arguments: `{"id": "big1", "offset": 29000}`}}},
			{Content: "read"},
		}},
		agent: map[string]any{"largeResultBytes": 10000},
	})
	s := e.start(agent.StartOptions{})
	e.send(s, "big")
	saved := filepath.Join(s.Dir(), "results", "big1.txt")
	data, err := os.ReadFile(saved)
	if err != nil || len(data) != 30000 {
		t.Fatalf("saved result: %d bytes, %v", len(data), err)
	}
	reqs := e.srv.Accepted()
	first := toolMessages(reqs[1])[0]
	if len(first) > 4000 || !strings.Contains(first, saved) || !strings.Contains(first, "read_tool_result") {
		t.Errorf("preview (%d bytes): %.300q", len(first), first)
	}
	second := toolMessages(reqs[2])[1]
	if !strings.Contains(second, "bytes 29000–30000 of 30000") {
		t.Errorf("read: %.300q", second[len(second)-100:])
	}
}

// TestImagesNeedImageInput: the demo's image reaches a model only when it accepts images;
// DeepSeek's get the text diagnostic.
func TestImagesNeedImageInput(t *testing.T) {
	e := newEnv(t, envOptions{model: modeltest.Options{Replies: []modeltest.Reply{
		{ToolCalls: []modeltest.ToolCall{{ID: "img", Name: "mcp__demo__image", Arguments: `{}`}}},
		{Content: "a gradient"},
	}}})
	s := e.start(agent.StartOptions{})
	e.send(s, "look")
	got := toolMessages(e.srv.Accepted()[1])
	if len(got) != 1 || !strings.Contains(got[0], "[image: image/png") || !strings.Contains(got[0], "does not accept image input") {
		t.Errorf("tool message %q", got)
	}
}

// TestCutStream: a stream cut before any of the answer is sent again (the turn answers);
// cut after a tool call and part of the answer were shown, the text shown is kept, the
// turn ends incomplete, and Retry runs the message again with the conversation kept (the
// tool's result is not asked for again), in requests that obey DeepSeek's rules.
func TestCutStream(t *testing.T) {
	e := newEnv(t, envOptions{model: modeltest.Options{Replies: []modeltest.Reply{
		{Reasoning: "thinking it over", Content: "lost", Cut: modeltest.CutDrop, CutBeforeAnswer: true},
		{Content: "whole answer"},
		{Reasoning: "add them", ToolCalls: []modeltest.ToolCall{call("mcp__demo__add", `{"a": 2, "b": 40}`)}},
		{Reasoning: "r", Content: "The sum is forty two", Cut: modeltest.CutDrop},
		{Reasoning: "again", Content: "The sum is 42."},
	}}})
	s := e.start(agent.StartOptions{})
	if _, err := s.Retry(ctxtest.Wait(t)); !errors.Is(err, agent.ErrNothingToRetry) {
		t.Fatalf("retry before a turn: %v", err)
	}
	if end := e.send(s, "hello"); end.Reason != session.StopDone || end.Text != "whole answer" {
		t.Fatalf("cut before the answer: %+v", end)
	}
	end, err := s.Send(ctxtest.Wait(t), "add 2 and 40")
	if !errors.Is(err, model.ErrStreamCut) || end.Reason != session.StopIncomplete || end.Text != "The sum" {
		t.Fatalf("cut mid-answer: %+v, %v", end, err)
	}
	end, err = s.Retry(ctxtest.Wait(t))
	if err != nil || end.Reason != session.StopDone || end.Text != "The sum is 42." {
		t.Fatalf("retry: %+v, %v", end, err)
	}
	reqs := e.srv.Accepted()
	last := reqs[len(reqs)-1]
	got := requestMessages(t, last)[1:] // after the system prompt
	want := []string{"user: hello", "assistant: whole answer", "user: add 2 and 40", "assistant: ", "tool: 42", "assistant: The sum", "user: add 2 and 40"}
	if !slices.Equal(got, want) {
		t.Errorf("the retried request's messages:\n%q\nwant\n%q", got, want)
	}
	if n := modeltest.CommonPrefix(reqs[len(reqs)-2].Prompt, last.Prompt); n != len(reqs[len(reqs)-2].Prompt) {
		t.Errorf("the retry repeats %d of the cut request's %d bytes", n, len(reqs[len(reqs)-2].Prompt))
	}
}
