package modeltest_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/internal/modeltest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func post(t *testing.T, url, key, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

func errorMessage(t *testing.T, body string) string {
	t.Helper()
	var e struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    string  `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Message == "" || e.Error.Type == "" {
		t.Fatalf("not DeepSeek's error body: %s", body)
	}
	return e.Error.Message
}

const user = `{"role":"user","content":"hi"}`

func TestRules(t *testing.T) {
	tools := func(n int) string {
		var parts []string
		for i := range n {
			parts = append(parts, fmt.Sprintf(`{"type":"function","function":{"name":"t%d","description":"d","parameters":{"type":"object"}}}`, i))
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	call := `{"role":"assistant","content":"","reasoning_content":"r","tool_calls":[{"id":"c1","type":"function","function":{"name":"t0","arguments":"{}"}}]}`
	tool := `{"role":"tool","tool_call_id":"c1","content":"ok"}`
	cases := []struct {
		name, key, body string
		status          int
		want            string
	}{
		{"A1 no bearer", "-", `{}`, 401, "Authentication Fails (auth header format should be Bearer sk-...)"},
		{"A2 wrong key", "sk-wrong-wxyz", `{}`, 401, "Authentication Fails, Your api key: ****wxyz is invalid"},
		{"M1 retired", "", `{"model":"deepseek-chat","messages":[` + user + `]}`, 400, "The supported API model names are deepseek-v4-pro or deepseek-v4-flash, but you passed deepseek-chat."},
		{"M1 reasoner", "", `{"model":"deepseek-reasoner","messages":[` + user + `]}`, 400, "but you passed deepseek-reasoner."},
		{"M2 unknown", "", `{"model":"gpt-4o","messages":[` + user + `]}`, 400, "Model Not Exist"},
		{"D1 not JSON", "", `{"model":`, 400, "Failed to deserialize the JSON body into the target type: "},
		{"D1 not object", "", `[1]`, 400, "invalid type: sequence, expected struct ChatCompletionRequest"},
		{"D1 no model", "", `{"messages":[]}`, 400, "missing field `model`"},
		{"D1 no messages", "", `{"model":"deepseek-v4-flash"}`, 400, "missing field `messages`"},
		{"D1 model type", "", `{"model":5,"messages":[]}`, 400, "model: invalid type: integer `5`, expected a string"},
		{"D2 role", "", `{"model":"deepseek-v4-flash","messages":[{"role":"developer","content":"x"}]}`, 400, "messages[0].role: unknown variant `developer`, expected one of `system`, `user`, `assistant`, `tool`"},
		{"D3 image", "", `{"model":"deepseek-v4-flash","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`, 400, "messages[0]: data did not match any variant of untagged enum ChatCompletionRequestContent"},
		{"D4 tool parts", "", `{"model":"deepseek-v4-flash","messages":[` + user + `,` + call + `,{"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"x"}]}]}`, 400, "messages[2]: invalid type: sequence, expected a string"},
		{"D5 no type", "", `{"model":"deepseek-v4-flash","messages":[` + user + `,{"role":"assistant","tool_calls":[{"id":"c1","function":{"name":"t0","arguments":"{}"}}]}]}`, 400, "messages[1].tool_calls[0]: missing field `type`"},
		{"D5 map arguments", "", `{"model":"deepseek-v4-flash","messages":[` + user + `,{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"t0","arguments":{}}}]}]}`, 400, "messages[1].tool_calls[0].function.arguments: invalid type: map, expected a string"},
		{"T1 129 tools", "", `{"model":"deepseek-v4-flash","messages":[` + user + `],"tools":` + tools(129) + `}`, 400, "at most 128 tools are supported per request, but 129 were passed"},
		{"T2 name", "", `{"model":"deepseek-v4-flash","messages":[` + user + `],"tools":[{"type":"function","function":{"name":"a.b"}}]}`, 400, "^[a-zA-Z0-9_-]{1,64}$"},
		{"T3 parameters type", "", `{"model":"deepseek-v4-flash","messages":[` + user + `],"tools":[{"type":"function","function":{"name":"a","parameters":{"type":"string"}}}]}`, 400, `top-level type must be "object"`},
		{"T3 parameters array", "", `{"model":"deepseek-v4-flash","messages":[` + user + `],"tools":[{"type":"function","function":{"name":"a","parameters":[]}}]}`, 400, "must be a JSON object"},
		{"T4 custom", "", `{"model":"deepseek-v4-flash","messages":[` + user + `],"tools":[{"type":"custom","function":{"name":"a"}}]}`, 400, "tools[0]: unknown variant `custom`, expected `function`"},
		{"T5 required without tools", "", `{"model":"deepseek-v4-flash","thinking":{"type":"disabled"},"messages":[` + user + `],"tool_choice":"required"}`, 400, "Invalid tool_choice"},
		{"T5 unknown function", "", `{"model":"deepseek-v4-flash","thinking":{"type":"disabled"},"messages":[` + user + `],"tools":` + tools(1) + `,"tool_choice":{"type":"function","function":{"name":"zz"}}}`, 400, `function "zz" is not among the tools`},
		{"T6 required thinking", "", `{"model":"deepseek-v4-flash","messages":[` + user + `],"tools":` + tools(1) + `,"tool_choice":"required"}`, 400, "Thinking mode does not support this tool_choice"},
		{"T6 named thinking", "", `{"model":"deepseek-v4-flash","messages":[` + user + `],"tools":` + tools(1) + `,"tool_choice":{"type":"function","function":{"name":"t0"}}}`, 400, "Thinking mode does not support this tool_choice"},
		{"P1 missing tool message", "", `{"model":"deepseek-v4-flash","messages":[` + user + `,` + call + `]}`, 400, "(insufficient tool messages following tool_calls message)"},
		{"P1 user before tool", "", `{"model":"deepseek-v4-flash","messages":[` + user + `,` + call + `,` + user + `,` + tool + `]}`, 400, "insufficient tool messages"},
		{"P2 orphan", "", `{"model":"deepseek-v4-flash","messages":[` + user + `,` + tool + `]}`, 400, "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"},
		{"P2 duplicate", "", `{"model":"deepseek-v4-flash","messages":[` + user + `,` + call + `,` + tool + `,` + tool + `]}`, 400, "must be a response to a preceding message"},
		{"R1 current round", "", `{"model":"deepseek-v4-flash","messages":[` + user + `,` + strings.Replace(call, `"reasoning_content":"r",`, "", 1) + `,` + tool + `]}`, 400, "The `reasoning_content` in the thinking mode must be passed back to the API."},
		{"R1 null", "", `{"model":"deepseek-v4-flash","messages":[` + user + `,` + strings.Replace(call, `"r"`, "null", 1) + `,` + tool + `]}`, 400, "must be passed back"},
		{"R1 final answer of an earlier round", "", `{"model":"deepseek-v4-flash","messages":[` + user + `,` + call + `,` + tool + `,{"role":"assistant","content":"done"},` + user + `]}`, 400, "must be passed back"},
		{"E1 thinking type", "", `{"model":"deepseek-v4-flash","messages":[` + user + `],"thinking":{"type":"auto"}}`, 400, "thinking.type: unknown variant `auto`, expected `enabled` or `disabled`"},
		{"E2 effort", "", `{"model":"deepseek-v4-flash","messages":[` + user + `],"reasoning_effort":"huge"}`, 400, "reasoning_effort: unknown variant `huge`"},
		{"O1 zero", "", `{"model":"deepseek-v4-flash","messages":[` + user + `],"max_tokens":0}`, 400, "Invalid max_tokens value, the valid range of max_tokens is [1, 393216]"},
		{"O1 large", "", `{"model":"deepseek-v4-flash","messages":[` + user + `],"max_tokens":393217}`, 400, "the valid range of max_tokens is [1, 393216]"},
		{"O3 json_schema", "", `{"model":"deepseek-v4-flash","messages":[` + user + `],"response_format":{"type":"json_schema"}}`, 400, "This response_format type is unavailable now"},
		{"O4 no json word", "", `{"model":"deepseek-v4-flash","messages":[` + user + `],"response_format":{"type":"json_object"}}`, 400, "Prompt must contain the word 'json' in some form to use 'response_format' of type 'json_object'."},
	}
	srv := modeltest.New(t, modeltest.Options{ExpectRejections: true})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key := c.key
			switch key {
			case "":
				key = srv.Key
			case "-":
				key = ""
			}
			status, _, body := post(t, srv.URL, key, c.body)
			if status != c.status {
				t.Fatalf("status %d, want %d: %s", status, c.status, body)
			}
			if msg := errorMessage(t, body); !strings.Contains(msg, c.want) {
				t.Fatalf("message %q, want it to contain %q", msg, c.want)
			}
		})
	}
	if got := len(srv.Rejections()); got != len(cases) {
		t.Fatalf("%d rejections recorded, want %d", got, len(cases))
	}
}

func TestAccepted(t *testing.T) {
	call := `{"role":"assistant","content":"","reasoning_content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"t0","arguments":"{}"}}]}`
	tool := `{"role":"tool","tool_call_id":"c1","content":"ok"}`
	tools := `[{"type":"function","function":{"name":"t0","parameters":{"type":"object"}}}]`
	bodies := map[string]string{
		"R1 previous round kept":   `{"model":"deepseek-v4-flash","messages":[` + user + `,` + call + `,` + tool + `,{"role":"assistant","content":"done","reasoning_content":"x"},` + user + `],"tools":` + tools + `}`,
		"R1 not needed disabled":   `{"model":"deepseek-v4-flash","thinking":{"type":"disabled"},"messages":[` + user + `,{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"t0","arguments":"{}"}}]},` + tool + `]}`,
		"R1 no tool calls":         `{"model":"deepseek-v4-flash","messages":[` + user + `,{"role":"assistant","content":"a"},` + user + `]}`,
		"T6 required disabled":     `{"model":"deepseek-v4-flash","thinking":{"type":"disabled"},"messages":[` + user + `],"tools":` + tools + `,"tool_choice":"required"}`,
		"T6 auto thinking":         `{"model":"deepseek-v4-pro","messages":[` + user + `],"tools":` + tools + `,"tool_choice":"auto"}`,
		"D3 text parts":            `{"model":"deepseek-v4-flash","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`,
		"O4 json word":             `{"model":"deepseek-v4-flash","messages":[{"role":"user","content":"answer in JSON"}],"response_format":{"type":"json_object"}}`,
		"E2 effort max":            `{"model":"deepseek-v4-flash","messages":[` + user + `],"reasoning_effort":"max","thinking":{"type":"enabled"}}`,
		"v1 path and max_tokens 1": `{"model":"deepseek-v4-flash","messages":[` + user + `],"max_tokens":1}`,
	}
	srv := modeltest.New(t, modeltest.Options{Reply: func(*modeltest.Call) modeltest.Reply { return modeltest.Reply{Content: "ok"} }})
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			status, _, answer := post(t, srv.URL, srv.Key, body)
			if status != 200 {
				t.Fatalf("status %d: %s", status, answer)
			}
		})
	}
	warned := false
	for _, r := range srv.Requests() {
		for _, w := range r.Warnings {
			warned = warned || w == "empty reasoning_content passed back"
		}
	}
	if !warned {
		t.Error("an empty reasoning_content passed back was not recorded as a warning")
	}
}

// event is a streamed chunk, decoded loosely.
type event struct {
	Choices []struct {
		Delta        map[string]json.RawMessage `json:"delta"`
		FinishReason *string                    `json:"finish_reason"`
	} `json:"choices"`
	Usage json.RawMessage `json:"usage"`
}

func streamEvents(t *testing.T, body string) ([]event, bool) {
	t.Helper()
	var out []event
	sc := bufio.NewScanner(strings.NewReader(body))
	done := false
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("not an SSE data line: %q", line)
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		var e event
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			t.Fatalf("%v: %s", err, data)
		}
		out = append(out, e)
	}
	return out, done
}

func TestStreamFormat(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{Replies: []modeltest.Reply{{
		Reasoning: "let me think", Content: "calling now",
		ToolCalls: []modeltest.ToolCall{{Name: "read", Arguments: `{"path":"/a/long/path/name"}`}, {ID: "x2", Name: "list", Arguments: `{}`}},
	}}})
	status, h, body := post(t, srv.URL, srv.Key, `{"model":"deepseek-v4-flash","stream":true,"stream_options":{"include_usage":true},"messages":[`+user+`],"tools":[{"type":"function","function":{"name":"read","description":"r"}},{"type":"function","function":{"name":"list","description":"l"}}]}`)
	if status != 200 || h.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, %s: %s", status, h.Get("Content-Type"), body)
	}
	events, done := streamEvents(t, body)
	if !done {
		t.Fatal("no [DONE]")
	}
	first := events[0].Choices[0].Delta
	if string(first["role"]) != `"assistant"` || string(first["content"]) != "null" || string(first["reasoning_content"]) != `""` {
		t.Fatalf("role delta %v", first)
	}
	var reasoning, content string
	args := map[int]string{}
	ids := map[int]string{}
	for i, e := range events {
		if i < len(events)-1 && string(e.Usage) != "null" {
			t.Fatalf("event %d: usage %s, want null", i, e.Usage)
		}
		if len(e.Choices) == 0 {
			continue
		}
		d := e.Choices[0].Delta
		var r, c string
		if json.Unmarshal(d["reasoning_content"], &r) == nil {
			reasoning += r
		}
		if json.Unmarshal(d["content"], &c) == nil {
			content += c
		}
		var calls []struct {
			Index    int    `json:"index"`
			ID       string `json:"id"`
			Function struct {
				Arguments string `json:"arguments"`
			} `json:"function"`
		}
		_ = json.Unmarshal(d["tool_calls"], &calls)
		for _, c := range calls {
			args[c.Index] += c.Function.Arguments
			if c.ID != "" {
				ids[c.Index] = c.ID
			}
		}
	}
	if reasoning != "let me think" || content != "calling now" {
		t.Fatalf("reasoning %q, content %q", reasoning, content)
	}
	if args[0] != `{"path":"/a/long/path/name"}` || args[1] != `{}` || ids[0] != "call_0_0" || ids[1] != "x2" {
		t.Fatalf("tool calls %v %v", ids, args)
	}
	finish := events[len(events)-2].Choices[0].FinishReason
	if finish == nil || *finish != "tool_calls" {
		t.Fatalf("finish reason %v", finish)
	}
	last := events[len(events)-1]
	var u map[string]any
	if len(last.Choices) != 0 || json.Unmarshal(last.Usage, &u) != nil || u["prompt_cache_miss_tokens"] == nil || u["completion_tokens_details"] == nil {
		t.Fatalf("usage event %+v", last)
	}
}

func TestStreamWithoutThinking(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{Replies: []modeltest.Reply{{Reasoning: "hidden", Content: "plain"}}})
	_, _, body := post(t, srv.URL, srv.Key, `{"model":"deepseek-v4-flash","stream":true,"thinking":{"type":"disabled"},"messages":[`+user+`]}`)
	events, done := streamEvents(t, body)
	if !done || strings.Contains(body, "reasoning_content") || strings.Contains(body, `"usage"`) {
		t.Fatalf("a stream without thinking and usage: %s", body)
	}
	if string(events[0].Choices[0].Delta["content"]) != `""` {
		t.Fatalf("role delta %v", events[0].Choices[0].Delta)
	}
}

func TestNonStreaming(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{Replies: []modeltest.Reply{{Reasoning: "", Content: "answer", FinishReason: "length"}}})
	_, _, body := post(t, srv.URL, srv.Key, `{"model":"deepseek-v4-flash","messages":[`+user+`]}`)
	var out struct {
		Object  string `json:"object"`
		Choices []struct {
			Message struct {
				Content          string  `json:"content"`
				ReasoningContent *string `json:"reasoning_content"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
			Hit          int `json:"prompt_cache_hit_tokens"`
			Miss         int `json:"prompt_cache_miss_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatal(err)
	}
	m := out.Choices[0]
	if out.Object != "chat.completion" || m.Message.Content != "answer" || m.Message.ReasoningContent == nil || *m.Message.ReasoningContent != "" || m.FinishReason != "length" {
		t.Fatalf("answer %s", body)
	}
	if out.Usage.PromptTokens == 0 || out.Usage.Hit+out.Usage.Miss != out.Usage.PromptTokens {
		t.Fatalf("usage %+v", out.Usage)
	}
}

func TestFaults(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{})
	srv.Push(
		modeltest.Reply{Status: 429, RetryAfter: "3"},
		modeltest.Reply{Status: 503},
		modeltest.Reply{Status: 500},
	)
	body := `{"model":"deepseek-v4-flash","stream":true,"messages":[` + user + `]}`
	for _, want := range []struct {
		status int
		msg    string
	}{{429, "Rate Limit Reached"}, {503, "Server Overloaded"}, {500, "Server Error"}} {
		status, h, answer := post(t, srv.URL, srv.Key, body)
		if status != want.status || errorMessage(t, answer) != want.msg {
			t.Fatalf("status %d %s, want %d", status, answer, want.status)
		}
		if want.status == 429 && h.Get("Retry-After") != "3" {
			t.Fatalf("Retry-After %q", h.Get("Retry-After"))
		}
	}
	if srv.Pending() != 0 {
		t.Fatal("replies left")
	}
}

func TestCut(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{Replies: []modeltest.Reply{
		{Content: "one two three four", Cut: modeltest.CutDrop},
		{Content: "one two three four", Cut: modeltest.CutEnd},
	}})
	body := `{"model":"deepseek-v4-flash","stream":true,"messages":[` + user + `]}`
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+srv.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil || strings.Contains(string(b), "[DONE]") || !strings.Contains(string(b), `"one"`) {
		t.Fatalf("a dropped stream read %q, %v", b, err)
	}
	_, _, answer := post(t, srv.URL, srv.Key, body)
	if strings.Contains(answer, "[DONE]") || strings.Contains(answer, "finish_reason\":\"") || !strings.Contains(answer, "one") {
		t.Fatalf("an ended stream %s", answer)
	}
}

func TestHold(t *testing.T) {
	release := make(chan struct{})
	srv := modeltest.New(t, modeltest.Options{Replies: []modeltest.Reply{{Content: "late", Hold: release}}})
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/chat/completions", strings.NewReader(`{"model":"deepseek-v4-flash","stream":true,"messages":[`+user+`]}`))
	req.Header.Set("Authorization", "Bearer "+srv.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	line, err := r.ReadString('\n')
	if err != nil || !strings.Contains(line, `"role":"assistant"`) {
		t.Fatalf("first event %q %v", line, err)
	}
	close(release)
	rest, err := io.ReadAll(r)
	if err != nil || !strings.Contains(string(rest), `"late"`) {
		t.Fatalf("after the release %q %v", rest, err)
	}
}

func TestPrefixCache(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{CacheUnit: 1, Reply: func(c *modeltest.Call) modeltest.Reply {
		return modeltest.Reply{Content: "ok " + c.LastUser()}
	}})
	sys := `{"role":"system","content":"` + strings.Repeat("You are a careful agent. ", 20) + `"}`
	tools := `[{"type":"function","function":{"name":"t0","description":"d","parameters":{"type":"object","properties":{"b":{},"a":{}}}}}]`
	first := `{"model":"deepseek-v4-flash","messages":[` + sys + `,` + user + `],"tools":` + tools + `}`
	second := `{"model":"deepseek-v4-flash","messages":[` + sys + `,` + user + `,{"role":"assistant","content":"ok hi","reasoning_content":"r"},{"role":"user","content":"more"}],"tools":` + tools + `}`
	reordered := strings.Replace(second, `"b":{},"a":{}`, `"a":{},"b":{}`, 1)
	for _, b := range []string{first, second, reordered} {
		if status, _, answer := post(t, srv.URL, srv.Key, b); status != 200 {
			t.Fatal(answer)
		}
	}
	reqs := srv.Accepted()
	if reqs[0].CacheHitTokens != 0 || reqs[1].CacheHitTokens == 0 || reqs[1].PrefixBytes < len(reqs[0].Prompt)-1 {
		t.Fatalf("hits %d, %d (prefix %d of %d)", reqs[0].CacheHitTokens, reqs[1].CacheHitTokens, reqs[1].PrefixBytes, len(reqs[0].Prompt))
	}
	if reqs[2].PrefixBytes >= reqs[1].PrefixBytes {
		t.Fatalf("reordered schema keys kept the prefix: %d", reqs[2].PrefixBytes)
	}
	ratios := srv.PrefixRatios()
	if len(ratios) != 2 || ratios[0] < 0.5 || ratios[1] >= ratios[0] {
		t.Fatalf("prefix ratios %v", ratios)
	}
}

func TestWarnings(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{Replies: []modeltest.Reply{{Content: "x"}}})
	post(t, srv.URL, srv.Key, `{"model":"deepseek-v4-flash","messages":[`+user+`],"temperature":0.2,"extra_body":{},"stream_options":{"include_usage":true},"tools":[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":"a","description":"d","strict":true}}]}`)
	got := strings.Join(srv.Requests()[0].Warnings, "; ")
	for _, want := range []string{`unknown field "extra_body"`, "temperature has no effect", "stream_options without stream", `tool "a" has no description`, "duplicate tool name", "strict"} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings %q lack %q", got, want)
		}
	}
}

// TestContextWindow: with a context window set, a prompt (estimated at 4 bytes a token)
// plus max_tokens over it is refused with the OpenAI-compatible wording (rule O2); one
// that fits is answered.
func TestContextWindow(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{ContextWindow: 100, ExpectRejections: true,
		Replies: []modeltest.Reply{{Content: "fits"}, {Content: "fits too"}}})
	msg := func(n int) string {
		return `{"model":"deepseek-v4-flash","messages":[{"role":"user","content":"` + strings.Repeat("x", n) + `"}]`
	}
	if status, _, body := post(t, srv.URL, srv.Key, msg(300)+`}`); status != 200 {
		t.Fatalf("a prompt within the window: %d %s", status, body)
	}
	status, _, body := post(t, srv.URL, srv.Key, msg(500)+`}`)
	if status != 400 || !strings.Contains(errorMessage(t, body), "This model's maximum context length is 100 tokens. However, you requested") {
		t.Fatalf("a prompt over the window: %d %s", status, body)
	}
	// max_tokens counts: the same small prompt with 90 tokens of room asked for is over.
	status, _, body = post(t, srv.URL, srv.Key, msg(300)+`,"max_tokens":90}`)
	if status != 400 || !strings.Contains(errorMessage(t, body), "(82 in the messages, 90 in the completion)") {
		t.Fatalf("prompt and max_tokens over the window: %d %s", status, body)
	}
	if status, _, body := post(t, srv.URL, srv.Key, msg(300)+`,"max_tokens":10}`); status != 200 {
		t.Fatalf("prompt and max_tokens within the window: %d %s", status, body)
	}
}
