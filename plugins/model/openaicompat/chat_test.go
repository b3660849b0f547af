package openaicompat_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/model/openaicompat"
)

// newChat returns a DeepSeek model talking to srv, with waits recorded instead of slept.
func newChat(t *testing.T, srv *modeltest.Server, cfg openaicompat.ChatConfig) (*openaicompat.Chat, *[]time.Duration) {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = "test"
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = srv.URL
	}
	if cfg.Provider == "" {
		cfg.Provider = openaicompat.ProviderDeepSeek
	}
	if cfg.APIKey == "" {
		cfg.APIKey = srv.Key
	}
	c, err := openaicompat.NewChat(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	waits := &[]time.Duration{}
	openaicompat.SetSleep(c, func(_ context.Context, d time.Duration) error {
		mu.Lock()
		*waits = append(*waits, d)
		mu.Unlock()
		return nil
	})
	return c, waits
}

func user(text string) model.Message { return model.Message{Role: model.RoleUser, Content: text} }

// collect gathers what Generate streams.
type collect struct {
	reasoning, content strings.Builder
	calls              []model.Delta
	retries            []model.Delta
}

func (c *collect) on(d model.Delta) {
	switch d.Kind {
	case model.DeltaReasoning:
		c.reasoning.WriteString(d.Text)
	case model.DeltaContent:
		c.content.WriteString(d.Text)
	case model.DeltaToolCall:
		c.calls = append(c.calls, d)
	case model.DeltaRetry:
		c.retries = append(c.retries, d)
	}
}

func TestChatStreamAssembly(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{Replies: []modeltest.Reply{{
		Reasoning: "I should read both files.",
		Content:   "Reading them.",
		ToolCalls: []modeltest.ToolCall{
			{ID: "call_a", Name: "read_file", Arguments: `{"path":"/etc/hostname","limit":10}`},
			{ID: "call_b", Name: "list_dir", Arguments: `{"path":"/tmp"}`},
		},
	}}})
	c, _ := newChat(t, srv, openaicompat.ChatConfig{})
	var got collect
	resp, err := c.Generate(context.Background(), &model.Request{
		System:   "You are terse.",
		Messages: []model.Message{user("read")},
		Tools:    []model.ToolDef{{Name: "read_file", Description: "r"}, {Name: "list_dir", Description: "l"}},
	}, got.on)
	if err != nil {
		t.Fatal(err)
	}
	m := resp.Message
	if m.Reasoning == nil || *m.Reasoning != "I should read both files." || m.Content != "Reading them." {
		t.Fatalf("message %+v", m)
	}
	if got.reasoning.String() != *m.Reasoning || got.content.String() != m.Content {
		t.Fatalf("streamed %q %q", got.reasoning.String(), got.content.String())
	}
	want := []model.ToolCall{{ID: "call_a", Name: "read_file", Arguments: `{"path":"/etc/hostname","limit":10}`}, {ID: "call_b", Name: "list_dir", Arguments: `{"path":"/tmp"}`}}
	if fmt.Sprint(m.ToolCalls) != fmt.Sprint(want) {
		t.Fatalf("tool calls %v", m.ToolCalls)
	}
	if got.calls[0].Index != 0 || got.calls[0].ID != "call_a" || got.calls[0].Name != "read_file" {
		t.Fatalf("first tool delta %+v", got.calls[0])
	}
	if resp.FinishReason != model.FinishToolCalls || resp.Model != modeltest.ModelFlash {
		t.Fatalf("finish %q model %q", resp.FinishReason, resp.Model)
	}
	u := resp.Usage
	if u.PromptTokens == 0 || u.CacheHitTokens+u.CacheMissTokens != u.PromptTokens || u.ReasoningTokens == 0 || u.CompletionTokens <= u.ReasoningTokens {
		t.Fatalf("usage %+v", u)
	}
}

func TestChatThinkingDefaultsAndEmptyReasoning(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{Replies: []modeltest.Reply{{Content: "hi"}, {Content: "hi", Reasoning: "dropped"}}})
	c, _ := newChat(t, srv, openaicompat.ChatConfig{ReasoningEffort: "max"})
	if !c.Info().Thinking || c.Info().ID != openaicompat.DeepSeekFlash || c.Info().MaxTools != 128 || c.Info().ContextWindow != openaicompat.DeepSeekContextWindow {
		t.Fatalf("info %+v", c.Info())
	}
	resp, err := c.Generate(context.Background(), &model.Request{Messages: []model.Message{user("hi")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Reasoning == nil || *resp.Message.Reasoning != "" {
		t.Fatalf("thinking mode without reasoning text: Reasoning %v, want a pointer to \"\"", resp.Message.Reasoning)
	}
	off := false
	resp, err = c.Generate(context.Background(), &model.Request{Messages: []model.Message{user("hi")}, Thinking: &off}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Reasoning != nil {
		t.Fatalf("thinking off: Reasoning %q, want nil", *resp.Message.Reasoning)
	}
	reqs := srv.Accepted()
	if !bytes.Contains(reqs[0].Body, []byte(`"thinking":{"type":"enabled"},"reasoning_effort":"max"`)) {
		t.Fatalf("first body %s", reqs[0].Body)
	}
	if !bytes.Contains(reqs[1].Body, []byte(`"thinking":{"type":"disabled"}`)) || bytes.Contains(reqs[1].Body, []byte("reasoning_effort")) {
		t.Fatalf("second body %s", reqs[1].Body)
	}
}

// TestChatPassback runs sessions of tool-calling turns against the documented rule R1:
// modeltest fails the test on any 400. Empty reasoning and a mid-session toggle included.
func TestChatPassback(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{Reply: func(call *modeltest.Call) modeltest.Reply {
		last := call.Messages[len(call.Messages)-1]
		if last.Role == "tool" {
			return modeltest.Reply{Reasoning: "", Content: "done: " + last.Content}
		}
		reasoning := "need a tool"
		if strings.Contains(last.Content, "empty") {
			reasoning = ""
		}
		return modeltest.Reply{Reasoning: reasoning, ToolCalls: []modeltest.ToolCall{{Name: "echo", Arguments: `{"x":1}`}}}
	}})
	c, _ := newChat(t, srv, openaicompat.ChatConfig{})
	tools := []model.ToolDef{{Name: "echo", Description: "echoes", Parameters: json.RawMessage(`{"type":"object"}`)}}
	var history []model.Message
	off, on := false, true
	turn := func(text string, thinking *bool) {
		t.Helper()
		history = append(history, user(text))
		for range 4 {
			resp, err := c.Generate(context.Background(), &model.Request{Messages: history, Tools: tools, Thinking: thinking}, nil)
			if err != nil {
				t.Fatalf("turn %q: %v", text, err)
			}
			history = append(history, resp.Message)
			if len(resp.Message.ToolCalls) == 0 {
				return
			}
			for _, tc := range resp.Message.ToolCalls {
				history = append(history, model.Message{Role: model.RoleTool, ToolCallID: tc.ID, Content: "echo " + tc.Arguments})
			}
		}
		t.Fatalf("turn %q did not end", text)
	}
	turn("first", nil)
	turn("empty reasoning", nil)
	turn("thinking off", &off)
	turn("thinking on again", &on)
	turn("last", nil)
	if r := srv.Rejections(); len(r) != 0 {
		t.Fatalf("rejections %v", r)
	}
	// The reasoning is sent back exactly: the empty one as "", the absent one (thinking off)
	// as "" once thinking is on again, since its stretch made tool calls.
	last := srv.Accepted()[len(srv.Accepted())-1].Body
	if n := bytes.Count(last, []byte(`"reasoning_content":"need a tool"`)); n != 3 {
		t.Fatalf("%d reasoning passbacks of the reasoned tool-call turns, want 3: %s", n, last)
	}
	if n := bytes.Count(last, []byte(`"reasoning_content":"","tool_calls"`)); n != 2 {
		t.Fatalf("%d empty passbacks (the empty reasoning, the turn made with thinking off), want 2: %s", n, last)
	}
	for _, r := range srv.Accepted() {
		for _, w := range r.Warnings {
			if w != "empty reasoning_content passed back" {
				t.Errorf("request %d: warning %q", r.Index, w)
			}
		}
	}
}

func TestChatClientSideRules(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{Replies: []modeltest.Reply{{Content: "forced"}, {Content: "ok"}}})
	c, _ := newChat(t, srv, openaicompat.ChatConfig{})
	tools := func(n int) []model.ToolDef {
		out := make([]model.ToolDef, n)
		for i := range out {
			out[i] = model.ToolDef{Name: fmt.Sprintf("tool_%d", i), Description: "d"}
		}
		return out
	}
	msgs := []model.Message{user("x")}
	cases := []struct {
		name string
		req  model.Request
		want string
	}{
		{"T6 required in thinking mode", model.Request{Messages: msgs, Tools: tools(1), ToolChoice: model.ToolChoiceRequired}, "not supported in thinking mode"},
		{"T5 unknown choice", model.Request{Messages: msgs, Tools: tools(1), ToolChoice: "tool_0"}, "expected auto, none or required"},
		{"T1 129 tools", model.Request{Messages: msgs, Tools: tools(129)}, "129 tools, at most 128"},
		{"T2 name", model.Request{Messages: msgs, Tools: []model.ToolDef{{Name: "fs.read"}}}, `tool "fs.read": a function name is 1 to 64 of [a-zA-Z0-9_-]`},
		{"T2 long name", model.Request{Messages: msgs, Tools: []model.ToolDef{{Name: strings.Repeat("a", 65)}}}, "1 to 64"},
		{"T3 parameters", model.Request{Messages: msgs, Tools: []model.ToolDef{{Name: "a", Parameters: json.RawMessage(`[1]`)}}}, "parameters must be one JSON object"},
		{"O1 max tokens", model.Request{Messages: msgs, MaxTokens: 400000}, "at most 393216"},
		{"D3 image", model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "see", Images: []model.Image{{MIMEType: "image/png", Data: []byte{1}}}}}}, "does not accept image input"},
		{"D2 role", model.Request{Messages: []model.Message{{Role: "developer", Content: "x"}}}, `unknown role "developer"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Generate(context.Background(), &tc.req, nil)
			if !errors.Is(err, openaicompat.ErrInvalidRequest) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrInvalidRequest with %q", err, tc.want)
			}
		})
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d requests reached the server", n)
	}
	off := false
	if _, err := c.Generate(context.Background(), &model.Request{Messages: msgs, Tools: tools(128), ToolChoice: model.ToolChoiceRequired, Thinking: &off}, nil); err != nil {
		t.Fatalf("required with thinking off and 128 tools: %v", err)
	}
	if _, err := c.Generate(context.Background(), &model.Request{Messages: msgs, Tools: tools(1), ToolChoice: model.ToolChoiceNone}, nil); err != nil {
		t.Fatalf("none in thinking mode: %v", err)
	}
}

func TestChatRetiredModel(t *testing.T) {
	for _, id := range []string{"deepseek-chat", "deepseek-reasoner"} {
		_, err := openaicompat.NewChat(openaicompat.ChatConfig{Name: "old", Model: id})
		if !errors.Is(err, openaicompat.ErrRetiredModel) || !strings.Contains(err.Error(), openaicompat.DeepSeekFlash) || !strings.Contains(err.Error(), openaicompat.DeepSeekPro) {
			t.Fatalf("%s: %v", id, err)
		}
	}
}

func TestChatServerRejection(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{ExpectRejections: true, Models: []string{"other"}})
	c, _ := newChat(t, srv, openaicompat.ChatConfig{Model: "unknown-model"})
	_, err := c.Generate(context.Background(), &model.Request{Messages: []model.Message{user("x")}}, nil)
	var ae *openaicompat.APIError
	if !errors.As(err, &ae) || ae.Status != 400 || ae.Message != "Model Not Exist" || ae.Type != "invalid_request_error" || ae.Retryable() {
		t.Fatalf("error %v (%+v)", err, ae)
	}
	if len(srv.Requests()) != 1 {
		t.Fatal("a 400 was retried")
	}
}

// TestChatContextTooLong: the server's refusal of a prompt over the context window (rule O2)
// matches model.ErrContextTooLong, so the agent can compact and send again; another 400
// does not.
func TestChatContextTooLong(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{ExpectRejections: true, ContextWindow: 50})
	c, _ := newChat(t, srv, openaicompat.ChatConfig{})
	_, err := c.Generate(context.Background(), &model.Request{Messages: []model.Message{user(strings.Repeat("long ", 100))}}, nil)
	if !errors.Is(err, model.ErrContextTooLong) || !strings.Contains(err.Error(), "maximum context length is 50 tokens") {
		t.Fatalf("error %v", err)
	}
	if errors.Is(&openaicompat.APIError{Status: 400, Message: "Model Not Exist"}, model.ErrContextTooLong) {
		t.Error("any 400 matches")
	}
}

// TestChatErrorBodyNotJSON: a refusal whose body is not the API's error object (a proxy's
// page) keeps its text, without control sequences or the key, and a 502 is retried.
func TestChatErrorBodyNotJSON(t *testing.T) {
	const key = "sk-proxy-test-key-9876"
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer "+key {
			t.Errorf("request %s with %q", r.URL.Path, r.Header.Get("Authorization"))
		}
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprint(w, "upstream \x1b[31mdown\x1b[0m for "+key+"\n")
	}))
	defer srv.Close()
	c, err := openaicompat.NewChat(openaicompat.ChatConfig{Name: "px", BaseURL: srv.URL + "/v1/", Model: "m", APIKey: key, MaxRetries: 1, RetryBase: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Generate(context.Background(), &model.Request{Messages: []model.Message{user("x")}}, nil)
	var ae *openaicompat.APIError
	if !errors.As(err, &ae) || ae.Status != 502 || !ae.Retryable() || n.Load() != 2 {
		t.Fatalf("error %v after %d requests", err, n.Load())
	}
	if msg := err.Error(); strings.ContainsAny(msg, "\x1b") || strings.Contains(msg, key) || !strings.Contains(msg, "upstream  [31mdown") {
		t.Fatalf("message %q", msg)
	}
}

func TestChatKeyNeverShown(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{ExpectRejections: true})
	const key = "sk-wrong-secret-value-1234"
	c, _ := newChat(t, srv, openaicompat.ChatConfig{APIKey: key})
	_, err := c.Generate(context.Background(), &model.Request{Messages: []model.Message{user("x")}}, nil)
	var ae *openaicompat.APIError
	if !errors.As(err, &ae) || ae.Status != 401 || !strings.Contains(err.Error(), "****1234 is invalid") {
		t.Fatalf("error %v", err)
	}
	if strings.Contains(fmt.Sprintf("%v %+v %#v", err, ae, ae), "secret-value") {
		t.Fatalf("the key shows in %v", err)
	}
	noKey, err := openaicompat.NewChat(openaicompat.ChatConfig{Name: "ds"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := noKey.Generate(context.Background(), &model.Request{Messages: []model.Message{user("x")}}, nil); !errors.Is(err, openaicompat.ErrNoAPIKey) {
		t.Fatalf("no key: %v", err)
	}
}

func TestChatRetries(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{Replies: []modeltest.Reply{
		{Status: 429, RetryAfter: "2"},
		{Status: 503},
		{Status: 500},
		{Content: "finally"},
	}})
	c, waits := newChat(t, srv, openaicompat.ChatConfig{RetryBase: time.Millisecond})
	var got collect
	resp, err := c.Generate(context.Background(), &model.Request{Messages: []model.Message{user("x")}}, got.on)
	if err != nil || resp.Message.Content != "finally" {
		t.Fatalf("%v %+v", err, resp)
	}
	if len(got.retries) != 3 || (*waits)[0] != 2*time.Second || time.Duration(got.retries[0].Wait) != 2*time.Second {
		t.Fatalf("retries %+v waits %v", got.retries, *waits)
	}
	var ae *openaicompat.APIError
	if !errors.As(got.retries[0].Err, &ae) || ae.Status != 429 || ae.RetryAfter != 2*time.Second {
		t.Fatalf("first retry %v", got.retries[0].Err)
	}
	for _, w := range (*waits)[1:] {
		if w > 4*time.Millisecond {
			t.Fatalf("backoff %v beyond its bound", w)
		}
	}

	// Retries run out: the last error is returned.
	srv.Push(modeltest.Reply{Status: 503}, modeltest.Reply{Status: 503})
	c2, _ := newChat(t, srv, openaicompat.ChatConfig{MaxRetries: 1, RetryBase: time.Millisecond})
	_, err = c2.Generate(context.Background(), &model.Request{Messages: []model.Message{user("x")}}, nil)
	if !errors.As(err, &ae) || ae.Status != 503 || ae.Message != "Server Overloaded" {
		t.Fatalf("after the retries: %v", err)
	}
}

func TestChatCutStream(t *testing.T) {
	for _, cut := range []modeltest.Cut{modeltest.CutDrop, modeltest.CutEnd} {
		// Cut after part of the answer was passed on: not sent again.
		srv := modeltest.New(t, modeltest.Options{Replies: []modeltest.Reply{{Reasoning: "a", Content: "one two three four", Cut: cut}}})
		c, _ := newChat(t, srv, openaicompat.ChatConfig{})
		var got collect
		resp, err := c.Generate(context.Background(), &model.Request{Messages: []model.Message{user("x")}}, got.on)
		if !errors.Is(err, openaicompat.ErrStreamCut) || !errors.Is(err, model.ErrStreamCut) || resp != nil {
			t.Fatalf("cut %d: %v %+v", cut, err, resp)
		}
		if got.content.String() != "one" || len(srv.Requests()) != 1 || len(got.retries) != 0 {
			t.Fatalf("cut %d: streamed %q, %d requests, %d retries", cut, got.content.String(), len(srv.Requests()), len(got.retries))
		}

		// Cut before any of the answer (during the reasoning): sent again like a 503.
		srv.Push(modeltest.Reply{Reasoning: "a b c d", Content: "lost", Cut: cut, CutBeforeAnswer: true}, modeltest.Reply{Reasoning: "again", Content: "whole"})
		c, _ = newChat(t, srv, openaicompat.ChatConfig{RetryBase: time.Millisecond})
		got = collect{}
		resp, err = c.Generate(context.Background(), &model.Request{Messages: []model.Message{user("x")}}, got.on)
		if err != nil || resp.Message.Content != "whole" || len(got.retries) != 1 || !errors.Is(got.retries[0].Err, model.ErrStreamCut) {
			t.Fatalf("cut %d before the answer: %v %+v, retries %+v", cut, err, resp, got.retries)
		}
		if got.content.String() != "whole" || len(srv.Requests()) != 3 {
			t.Fatalf("cut %d before the answer: streamed %q, %d requests", cut, got.content.String(), len(srv.Requests()))
		}
	}
}

func TestChatFinishLength(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{Replies: []modeltest.Reply{{Content: "cut sh", FinishReason: "length"}}})
	c, _ := newChat(t, srv, openaicompat.ChatConfig{MaxOutputTokens: 2})
	resp, err := c.Generate(context.Background(), &model.Request{Messages: []model.Message{user("x")}}, nil)
	if err != nil || resp.FinishReason != model.FinishLength {
		t.Fatalf("%v %+v", err, resp)
	}
	if !bytes.Contains(srv.Requests()[0].Body, []byte(`"max_tokens":2`)) {
		t.Fatalf("body %s", srv.Requests()[0].Body)
	}
}

func TestChatSlowFirstTokenAndCancel(t *testing.T) {
	release := make(chan struct{})
	srv := modeltest.New(t, modeltest.Options{Replies: []modeltest.Reply{{Content: "late", Hold: release}, {Content: "never", Hold: make(chan struct{})}}})
	c, _ := newChat(t, srv, openaicompat.ChatConfig{})
	first := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		_, err := c.Generate(context.Background(), &model.Request{Messages: []model.Message{user("x")}}, func(d model.Delta) {
			if d.Kind == model.DeltaContent {
				select {
				case first <- d.Text:
				default:
				}
			}
		})
		done <- err
	}()
	close(release)
	if got := <-first; got != "late" {
		t.Fatalf("first token %q", got)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	cx, cancel := context.WithCancel(context.Background())
	go func() {
		_, err := c.Generate(cx, &model.Request{Messages: []model.Message{user("x")}}, nil)
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestChatPrefixDiscipline(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{CacheUnit: 1, Reply: func(*modeltest.Call) modeltest.Reply { return modeltest.Reply{Content: "ok"} }})
	c, _ := newChat(t, srv, openaicompat.ChatConfig{})
	schema := "{\"type\":\"object\",\n  \"properties\":{\"zeta\":{\"type\":\"number\",\"maximum\":1.50,\"default\":1e3},\"alpha\":{\"type\":\"string\",\"pattern\":\"<a&b>\"}},\"required\":[\"zeta\"]}"
	req := &model.Request{
		System:   "You are <careful> & \u2028 terse.",
		Messages: []model.Message{user("hi \"there\"\n")},
		Tools:    []model.ToolDef{{Name: "b_tool", Description: "second", Parameters: json.RawMessage(schema)}, {Name: "a_tool"}},
	}
	one, err := c.Encode(req)
	if err != nil {
		t.Fatal(err)
	}
	two, _ := c.Encode(req)
	if !bytes.Equal(one, two) {
		t.Fatalf("two encodings differ:\n%s\n%s", one, two)
	}
	if !bytes.Contains(one, []byte(`"parameters":`+schema+`}}`)) {
		t.Fatalf("the schema was not sent as given: %s", one)
	}
	var decoded map[string]any
	if err := json.Unmarshal(one, &decoded); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if decoded["messages"].([]any)[0].(map[string]any)["content"] != req.System {
		t.Fatalf("system prompt round trip: %v", decoded["messages"])
	}

	// A session: the prefix of each request is the whole previous request but its end.
	history := []model.Message{user("hi")}
	for i := range 5 {
		resp, err := c.Generate(context.Background(), &model.Request{System: req.System, Messages: history, Tools: req.Tools}, nil)
		if err != nil {
			t.Fatal(err)
		}
		history = append(history, resp.Message, user(fmt.Sprintf("next %d", i)))
	}
	acc := srv.Accepted()
	for i := 1; i < len(acc); i++ {
		if acc[i].CacheHitTokens == 0 || modeltest.CommonPrefix(acc[i-1].Body, acc[i].Body) < len(acc[i-1].Body)-200 {
			t.Fatalf("request %d: %d cache hits, common prefix %d of %d", i, acc[i].CacheHitTokens, modeltest.CommonPrefix(acc[i-1].Body, acc[i].Body), len(acc[i-1].Body))
		}
	}
}

func TestChatOpenAICompatible(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{Models: []string{"llama-3"}, Replies: []modeltest.Reply{{Content: "plain"}}})
	c, err := openaicompat.NewChat(openaicompat.ChatConfig{Name: "local", BaseURL: srv.URL, Model: "llama-3", APIKey: srv.Key, ImageInput: true})
	if err != nil {
		t.Fatal(err)
	}
	if i := c.Info(); i.Provider != openaicompat.ProviderOpenAI || i.Thinking || !i.ImageInput {
		t.Fatalf("info %+v", i)
	}
	// modeltest is DeepSeek: without a thinking field it thinks, so the answer has reasoning.
	resp, err := c.Generate(context.Background(), &model.Request{Messages: []model.Message{user("x")}}, nil)
	if err != nil || resp.Message.Content != "plain" {
		t.Fatalf("%v %+v", err, resp)
	}
	if bytes.Contains(srv.Requests()[0].Body, []byte(`"thinking"`)) {
		t.Fatalf("a thinking field went to a generic endpoint: %s", srv.Requests()[0].Body)
	}
	if _, err := openaicompat.NewChat(openaicompat.ChatConfig{Name: "local", BaseURL: srv.URL}); err == nil || !strings.Contains(err.Error(), "model id is required") {
		t.Fatalf("no model id: %v", err)
	}
	if _, err := openaicompat.NewChat(openaicompat.ChatConfig{Name: "bad", BaseURL: "ftp://x?key=secret"}); err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("bad URL: %v", err)
	}
}
