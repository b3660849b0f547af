package app

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/model/openaicompat"
)

// testModelConfig configures testmodel: the real Chat Completions provider pointed at a
// local modeltest server.
type testModelConfig struct {
	BaseURL    string `json:"baseURL"`
	APIKey     string `json:"apiKey"`
	MaxRetries int    `json:"maxRetries"`
}

// testModel provides the model service with one model, "default", on a modeltest server.
var testModel = ctx.Define(ctx.Meta{Name: "testmodel"}, func(c *ctx.Context, cfg testModelConfig) error {
	chat, err := openaicompat.NewChat(openaicompat.ChatConfig{Name: "default", Provider: openaicompat.ProviderDeepSeek, BaseURL: cfg.BaseURL,
		APIKey: cfg.APIKey, RetryBase: time.Millisecond, MaxRetries: cfg.MaxRetries})
	if err != nil {
		return err
	}
	_, err = model.Key.Provide(c, model.NewService(map[string]model.Model{"default": chat}, ""))
	return err
})

func init() { testPlugins["testmodel"] = testModel }

// agentProfile writes a profile with the demo server, a model on srv and extra rows.
func agentProfile(t *testing.T, srv *modeltest.Server, extra string) string {
	t.Helper()
	return writeFile(t, t.TempDir(), "agent.yaml", "extends: default\nplugins:\n  model:\n    use: testmodel\n    config: {baseURL: \""+
		srv.URL+"\", apiKey: \""+srv.Key+"\"}\n"+extra)
}

func TestAskWithDemoServer(t *testing.T) {
	t.Parallel()
	srv := modeltest.New(t, modeltest.Options{Replies: []modeltest.Reply{
		{ToolCalls: []modeltest.ToolCall{{Name: "mcp__demo__add", Arguments: `{"a": 2, "b": 40}`}}},
		{Content: "The answer is 42.\x1b[2J"},
		// --json, the task from stdin
		{Content: "from stdin"},
	}})
	p := agentProfile(t, srv, "")
	r := run(t, nil, "-p", p, "ask", "add", "2", "and", "40")
	r.expect(t, ExitOK, "The answer is 42.", "")
	if srv.Accepted()[0].Body == nil || !strings.Contains(string(srv.Accepted()[0].Body), `"content":"add 2 and 40"`) {
		t.Errorf("the task was not sent: %s", srv.Accepted()[0].Body)
	}

	r = runWith(t, t.Context(), testOptions(), "a task on stdin\n", nil, "-p", p, "ask", "--json")
	r.expect(t, ExitOK, `"type":"turn.end"`, "")
	var types []string
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		var ev session.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("not a JSON event: %q", sc.Text())
		}
		types = append(types, string(ev.Type))
		if ev.Type == session.EventUser && ev.Text != "a task on stdin" {
			t.Errorf("task %q", ev.Text)
		}
	}
	if types[0] != "session" || types[len(types)-1] != "turn.end" {
		t.Errorf("event types %v", types)
	}

	// Both sessions are stored; show prints the first's conversation, resume goes on.
	r = run(t, nil, "-p", p, "sessions", "list", "--json")
	r.expect(t, ExitOK, "", "")
	var list []session.Info
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list) != 2 {
		t.Fatalf("sessions list: %v\n%s", err, r.stdout)
	}
	first := list[1]
	if first.Title != "add 2 and 40" || first.Turns != 1 {
		t.Errorf("first session %+v", first)
	}
	run(t, nil, "-p", p, "sessions", "list").expect(t, ExitOK, "add 2 and 40", "")
	r = run(t, nil, "-p", p, "sessions", "show", first.ID)
	r.expect(t, ExitOK, "> add 2 and 40", "")
	for _, want := range []string{"mcp__demo__add", "→ ok", "The answer is 42.", "done after 2 steps"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "\x1b") {
		t.Error("show printed a control sequence from the model")
	}
	r = run(t, nil, "-p", p, "sessions", "show", first.ID[:len(first.ID)-1]+"x")
	r.expect(t, ExitUsage, "", "did you mean")

	// Without a task, resume says where the task goes and how to go on in a conversation.
	run(t, nil, "-p", p, "sessions", "resume", first.ID).expect(t, ExitUsage, "", `harness sessions resume ID "TASK"`)
	run(t, nil, "-p", p, "sessions", "resume", first.ID).expect(t, ExitUsage, "", "harness chat --resume ID")
	srv.Push(modeltest.Reply{Content: "resumed fine"})
	run(t, nil, "-p", p, "sessions", "resume", first.ID, "and", "now?").expect(t, ExitOK, "resumed fine", "")
	// "last" is the session updated last: the first one, just resumed.
	run(t, nil, "-p", p, "sessions", "show", "last").expect(t, ExitOK, "> and now?", "")
	reqs := srv.Accepted()
	last := reqs[len(reqs)-1]
	if n := modeltest.CommonPrefix(reqs[1].Prompt, last.Prompt); n != len(reqs[1].Prompt) {
		t.Errorf("the resumed request repeats %d of %d bytes", n, len(reqs[1].Prompt))
	}
}

func TestAskExitStatus(t *testing.T) {
	t.Parallel()
	srv := modeltest.New(t, modeltest.Options{Reply: func(c *modeltest.Call) modeltest.Reply {
		return modeltest.Reply{Content: "partial", ToolCalls: []modeltest.ToolCall{{Name: "mcp__demo__echo", Arguments: `{"text":"x"}`}}}
	}})
	p := agentProfile(t, srv, "  agent:\n    use: agent\n    config: {maxSteps: 2}\n")
	r := run(t, nil, "-p", p, "ask", "loop")
	r.expect(t, ExitIncomplete, "partial", "max_steps")
	if strings.Contains(r.stderr, "harness: \n") {
		t.Errorf("an empty error line on stderr:\n%s", r.stderr)
	}
	p = agentProfile(t, srv, "  agent:\n    use: agent\n    config: {tokenBudget: 10}\n")
	run(t, nil, "-p", p, "ask", "loop").expect(t, ExitIncomplete, "partial", "token_budget")
	// finish_reason length: the answer cut at the output limit, printed, exit 3.
	cut := modeltest.New(t, modeltest.Options{Replies: []modeltest.Reply{{Content: "cut short", FinishReason: "length"}}})
	run(t, nil, "-p", agentProfile(t, cut, ""), "ask", "x").expect(t, ExitIncomplete, "cut short", "the turn stopped before the model finished: length")
	// A stream cut before any of the answer is sent again: exit 0. Cut after part of the
	// answer: that part on stdout, exit 3; in a chat, /retry sends the message again.
	cut.Push(modeltest.Reply{Reasoning: "hmm", Content: "lost", Cut: modeltest.CutDrop, CutBeforeAnswer: true}, modeltest.Reply{Content: "whole"},
		modeltest.Reply{Content: "one two three four", Cut: modeltest.CutDrop})
	p = agentProfile(t, cut, "")
	run(t, nil, "-p", p, "ask", "x").expect(t, ExitOK, "whole", "")
	run(t, nil, "-p", p, "ask", "x").expect(t, ExitIncomplete, "one two", "the turn stopped before the model finished: incomplete")
	cut.Push(modeltest.Reply{Content: "one two three four", Cut: modeltest.CutEnd}, modeltest.Reply{Content: "all of it"})
	r = runWith(t, t.Context(), testOptions(), "x\n/retry\n", nil, "-p", p, "chat")
	r.expect(t, ExitOK, "(the answer was cut: /retry runs the message again)", "")
	r.expect(t, ExitOK, "all of it", "")
	// Exit 1: the API keeps failing (the retries run out), or refuses.
	cut.Push(modeltest.Reply{Status: 503}, modeltest.Reply{Status: 503})
	p = writeFile(t, t.TempDir(), "retries.yaml", "extends: default\nplugins:\n  model:\n    use: testmodel\n    config: {baseURL: \""+
		cut.URL+"\", apiKey: \""+cut.Key+"\", maxRetries: 1}\n")
	run(t, nil, "-p", p, "ask", "x").expect(t, ExitFailure, "", "API error 503")

	run(t, []string{"DEEPSEEK_API_KEY=", "HOME=" + t.TempDir()}, "ask", "no key").expect(t, ExitFailure, "", "harness: no API key for model flash")

	// chat says it at once, and a turn shows the error once; a chat left without a
	// message keeps no session.
	home := t.TempDir()
	noKey := []string{"DEEPSEEK_API_KEY=", "HOME=" + home, "XDG_STATE_HOME="}
	r = runWith(t, t.Context(), testOptions(), "hello\n", noKey, "chat")
	r.expect(t, ExitOK, "warning: no API key for model flash: set DEEPSEEK_API_KEY", "")
	r.expect(t, ExitOK, "error · 1 step · 0 prompt tokens", "")
	if n := strings.Count(r.stdout, "error: no API key"); n != 1 {
		t.Errorf("the turn's error is shown %d times:\n%s", n, r.stdout)
	}
	runWith(t, t.Context(), testOptions(), "", noKey, "chat").expect(t, ExitOK, "warning: no API key", "")
	empty := []string{"HOME=" + t.TempDir(), "XDG_STATE_HOME="}
	run(t, empty, "sessions", "show", "last").expect(t, ExitUsage, "", "harness: no stored session in ")
	run(t, empty, "chat", "--resume", "last").expect(t, ExitUsage, "", "harness: no stored session in ")
	r = run(t, noKey, "sessions", "list", "--json")
	if n := strings.Count(r.stdout, `"id"`); n != 1 {
		t.Errorf("%d sessions listed, want the one with a message:\n%s", n, r.stdout)
	}
	run(t, nil, "-p", p, "ask").expect(t, ExitUsage, "", "a task is required")
	run(t, nil, "-p", p, "ask", "--agent", "nobody", "x").expect(t, ExitUsage, "", "unknown agent")
}

// TestAskDenied: with nobody to ask, the model is told the call was refused; --allow
// allows it.
func TestAskDenied(t *testing.T) {
	t.Parallel()
	srv := modeltest.New(t, modeltest.Options{Reply: func(c *modeltest.Call) modeltest.Reply {
		last := c.Messages[len(c.Messages)-1]
		if last.Role == "user" {
			return modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "mcp__demo__add_tool", Arguments: `{"name":"z"}`}}}
		}
		return modeltest.Reply{Content: "tool said: " + last.Content}
	}})
	p := agentProfile(t, srv, "")
	r := run(t, nil, "-p", p, "ask", "add a tool")
	r.expect(t, ExitOK, "nobody can be asked", "")
	if strings.Contains(r.stderr, "refusing") {
		// The unattended agent answered the question; ask once answered it again, in vain.
		t.Errorf("ask tried to refuse a question the agent had answered:\n%s", r.stderr)
	}
	run(t, nil, "-p", p, "ask", "--allow", "demo/add_*", "add a tool").expect(t, ExitOK, "extra_z", "")
}

// TestAgentModeFlag: --mode ptc gives the model run_code instead of the tools, in ask and in
// chat (whose flag was once ignored); a program's answer comes back; a bad mode is a usage error.
func TestAgentModeFlag(t *testing.T) {
	t.Parallel()
	srv := modeltest.New(t, modeltest.Options{Reply: func(c *modeltest.Call) modeltest.Reply {
		if c.Messages[len(c.Messages)-1].Role == "user" {
			return modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "run_code",
				Arguments: `{"code":"const r = await tools[\"mcp__demo__add\"]({a: 2, b: 40}); return r.content[0].text","description":"add"}`}}}
		}
		return modeltest.Reply{Content: "tools " + strings.Join(c.Tools, ",") + "; result " + c.Messages[len(c.Messages)-1].Content}
	}})
	p := agentProfile(t, srv, "")
	r := run(t, nil, "-p", p, "ask", "--mode", "ptc", "--allow", "demo/*", "add 2 and 40")
	r.expect(t, ExitOK, "tools run_code; result ", "")
	if !strings.Contains(r.stdout, "42") {
		t.Errorf("the program's result is missing: %q", r.stdout)
	}
	r = runWith(t, t.Context(), testOptions(), "add 2 and 40\n", nil, "-p", p, "chat", "--mode", "ptc", "--allow", "demo/*")
	r.expect(t, ExitOK, "tools run_code; result ", "")
	r.expect(t, ExitOK, " · PTC mode (the model writes programs that call the tools)", "") // the banner says the mode
	run(t, nil, "-p", p, "chat", "--mode", "fast").expect(t, ExitUsage, "", `--mode: want "standard" or "ptc", got "fast"`)
}

// TestAskOnHost: with a host running, ask gives the task to the host's agent, which calls
// the host's servers (this process starts none); a call the host's permissions would ask
// about is refused (nobody to ask), the model told why; --local works in process; a host
// without an agent is said in one line and ask works in process.
func TestAskOnHost(t *testing.T) {
	t.Parallel()
	srv := modeltest.New(t, modeltest.Options{Reply: func(c *modeltest.Call) modeltest.Reply {
		last := c.Messages[len(c.Messages)-1]
		switch {
		case last.Role == "user" && strings.Contains(last.Content, "add a tool"):
			return modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "mcp__demo__add_tool", Arguments: `{"name":"z"}`}}}
		case last.Role == "user":
			return modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "mcp__demo__add", Arguments: `{"a": 2, "b": 40}`}}}
		}
		return modeltest.Reply{Content: "tool said: " + last.Content}
	}})
	// The built-in profiles' agent: the profile adds only its model.
	p := agentProfile(t, srv, "")
	env := testEnv(t)
	startRun(t, env, "-p", p, "run")

	r := run(t, env, "ask", "add", "2", "and", "40")
	r.expect(t, ExitOK, "tool said: 42", "answering for the host at http://127.0.0.1:")
	if strings.Contains(r.stderr, "demo:") {
		t.Errorf("ask started servers of its own:\n%s", r.stderr)
	}
	run(t, env, "ask", "add a tool").expect(t, ExitOK, "nobody to ask", "")
	r = run(t, env, "ask", "--json", "add", "2", "and", "40")
	r.expect(t, ExitOK, `"type":"turn.end"`, "")

	local := run(t, env, "ask", "--local", "-p", p, "add", "2", "and", "40")
	local.expect(t, ExitOK, "tool said: 42", "")
	if strings.Contains(local.stderr, "answering for") {
		t.Errorf("--local used the host:\n%s", local.stderr)
	}
}

// TestAskHostWithoutAgent: a running host without an agent (its profile turns the
// built-in one off) is said in one line, and ask works in process.
func TestAskHostWithoutAgent(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	p := writeFile(t, t.TempDir(), "noagent.yaml", "extends: default\nplugins:\n  agent:\n    enabled: false\n")
	startRun(t, env, "-p", p, "run")
	r := run(t, append(env, "DEEPSEEK_API_KEY="), "ask", "hello")
	r.expect(t, ExitFailure, "", "has no agent (its profile mounts no model or agent); working in process")
}

// TestAskWithoutKeyStartsNothing: ask with a model that has no key fails before the
// profile's servers start (here a stdio server that leaves a mark when started), naming
// where the key is looked for.
func TestAskWithoutKeyStartsNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mark := filepath.Join(dir, "started")
	script := writeScript(t, dir, "server.sh", "#!/bin/sh\ntouch "+mark+"\nsleep 5\n")
	p := writeFile(t, dir, "p.yaml", "extends: cli\nplugins:\n  marker:\n    use: mcpclient\n    config: {serverName: marker, transport: stdio, command: "+script+"}\n")
	env := []string{"DEEPSEEK_API_KEY=", "HOME=" + dir, "XDG_CONFIG_HOME=" + filepath.Join(dir, "config")}
	run(t, env, "-p", p, "ask", "no key").expect(t, ExitFailure, "", "harness: no API key for model flash: set DEEPSEEK_API_KEY")
	if _, err := os.Stat(mark); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a server was started for a task that could not run: %v", err)
	}
}

// TestChatCost: the cost of each turn and of the session next to the tokens, /cost, the
// sessions list's COST column, and the JSON events' cost, at DeepSeek Flash's price.
func TestChatCost(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{Reply: func(*modeltest.Call) modeltest.Reply { return modeltest.Reply{Content: "hi there"} }})
	p := agentProfile(t, srv, "")
	r := runWith(t, t.Context(), testOptions(), "hello\nagain\n/cost\n", nil, "-p", p, "chat")
	r.expect(t, ExitOK, "completion tokens · $0.0", "")
	r.expect(t, ExitOK, "(session $0.0", "")
	r.expect(t, ExitOK, "session: 2 requests · ", "")
	r.expect(t, ExitOK, "model default: $0.0028 per million input tokens on a cache hit, $0.14 on a miss, $0.28 per million output tokens", "")
	r = run(t, nil, "-p", p, "sessions", "list")
	r.expect(t, ExitOK, "COST", "")
	r.expect(t, ExitOK, " $0.0", "")
	r = run(t, nil, "-p", p, "ask", "--json", "hello")
	r.expect(t, ExitOK, `"type":"usage"`, "")
	r.expect(t, ExitOK, `"cost":`, "")
}
