package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/model/openaicompat"
)

// writeSession writes a session log as the agent does, one event per line, under the
// sessions directory of the state directory state.
func writeSession(t *testing.T, state, id string, events []session.Event) {
	t.Helper()
	dir := filepath.Join(state, "harness", "sessions", id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i, ev := range events {
		ev.Seq = int64(i + 1)
		line, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestSessionsListShow(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	env := []string{"HOME=" + state, "XDG_STATE_HOME=" + state}
	run(t, env, "sessions", "list").expect(t, ExitOK, "", "no sessions in "+filepath.Join(state, "harness", "sessions"))
	created := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	writeSession(t, state, "20261203-100000-abcdef", []session.Event{
		{Type: session.EventSession, Header: &session.Header{ID: "20261203-100000-abcdef", Model: "default", ModelID: "deepseek-v4-flash", Created: created}},
		{Type: session.EventUser, Text: "list the files\nplease"},
		{Type: session.EventAssistant, Message: &model.Message{Role: model.RoleAssistant,
			ToolCalls: []model.ToolCall{{ID: "c1", Name: "mcp__fs__list", Arguments: `{"path":"."}`}}}},
		{Type: session.EventToolResult, Call: &session.CallInfo{ID: "c1", Tool: "mcp__fs__list", Args: `{"path":"."}`},
			Result: &session.ResultInfo{Outcome: "ok", Duration: 3}, Message: &model.Message{Role: model.RoleTool, ToolCallID: "c1", Content: "a\nb"}},
		{Type: session.EventAssistant, Message: &model.Message{Role: model.RoleAssistant, Content: "Two files: \x1b]0;evil\x07a and b."}},
		{Type: session.EventUsage, Usage: &model.Usage{PromptTokens: 100, CompletionTokens: 10, CacheHitTokens: 64}},
		{Type: session.EventTurnEnd, End: &session.TurnEnd{Reason: session.StopDone, Steps: 2, Usage: model.Usage{PromptTokens: 100, CompletionTokens: 10, CacheHitTokens: 64}}},
	})
	r := run(t, env, "sessions", "list")
	r.expect(t, ExitOK, "20261203-100000-abcdef", "")
	if !strings.Contains(r.stdout, "list the files") || strings.Contains(r.stdout, "please") {
		t.Errorf("list shows the first line as the title:\n%s", r.stdout)
	}
	r = run(t, env, "sessions", "show", "20261203-100000-abcdef")
	r.expect(t, ExitOK, "> list the files\n> please", "")
	for _, want := range []string{"mcp__fs__list {\"path\":\".\"} → ok (3 ms)", "Two files: ", "a and b.", "done after 2 steps; 100 prompt tokens, 64 cached"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.ContainsAny(r.stdout, "\x1b\x07") {
		t.Errorf("show printed control characters: %q", r.stdout)
	}
	r = run(t, env, "sessions", "show", "--json", "20261203-100000-abcdef")
	if lines := strings.Count(r.stdout, "\n"); r.code != ExitOK || lines != 7 {
		t.Errorf("show --json: exit %d, %d lines", r.code, lines)
	}
	run(t, env, "sessions", "show", "20261203-100000-abcdeg").expect(t, ExitUsage, "", `did you mean "20261203-100000-abcdef"`)
	run(t, env, "sessions", "show", "../x").expect(t, ExitUsage, "", "no session")
}

func TestAskWithoutModel(t *testing.T) {
	dir := t.TempDir()
	noModel := writeFile(t, dir, "nomodel.yaml", "plugins:\n  tools: {use: toolregistry}\n  prompt: {use: sysprompt}\n")
	run(t, nil, "-p", noModel, "ask", "hello").expect(t, ExitFailure, "", "mounts no model service")
	// The built-in profiles mount DeepSeek models; without a key the first request says
	// where the key is read from.
	t.Setenv(openaicompat.EnvDeepSeekKey, "")
	t.Setenv("XDG_CONFIG_HOME", dir)
	run(t, nil, "-p", "cli", "ask", "hello").expect(t, ExitFailure, "", "no API key for model flash: set DEEPSEEK_API_KEY")
}

// TestAskDeepSeekFromEnvironment: with nothing but DEEPSEEK_API_KEY set (and the base URL
// pointed at the local test API), the built-in profile's default model answers.
func TestAskDeepSeekFromEnvironment(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{Replies: []modeltest.Reply{{Reasoning: "A greeting.", Content: "Hello from the model."}}})
	dir := t.TempDir()
	t.Setenv(openaicompat.EnvDeepSeekKey, srv.Key)
	t.Setenv(openaicompat.EnvDeepSeekBaseURL, srv.URL)
	t.Setenv("XDG_CONFIG_HOME", dir)
	run(t, []string{"HOME=" + dir, "XDG_STATE_HOME=" + dir}, "-p", "cli", "ask", "hello").expect(t, ExitOK, "Hello from the model.", "")
	if got := srv.Accepted(); len(got) != 1 || got[0].Model != modeltest.ModelFlash {
		t.Fatalf("requests %+v", got)
	}
}
