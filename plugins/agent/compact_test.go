package agent_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/plugins/agent"
	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/model/openaicompat"
)

// summaryQuestion starts the agent's request for a summary (a test server tells it from
// a turn's request by it).
const summaryQuestion = "Summarise the conversation so far"

// longSession is a model for long sessions: each turn calls the demo's echo with a long
// text and then answers at length; a summary request is answered with a summary. Turn n's
// answer is "answer n: …".
func longSession(c *modeltest.Call) modeltest.Reply {
	last := c.Messages[len(c.Messages)-1]
	switch {
	case last.Role == "user" && strings.HasPrefix(last.Content, summaryQuestion):
		return modeltest.Reply{Reasoning: "Summing up.", Content: "Summary: the user asked for numbered notes; each was echoed and answered. " + strings.Repeat("Earlier facts. ", 40)}
	case last.Role == "user":
		n := strings.TrimPrefix(last.Content, "note ")
		return modeltest.Reply{Reasoning: "I echo the note " + n + " first.",
			ToolCalls: []modeltest.ToolCall{{Name: "mcp__demo__echo", Arguments: fmt.Sprintf(`{"text":"note %s %s"}`, n, strings.Repeat("lorem ipsum ", 120))}}}
	default:
		// the answer of the turn: its number is in the first user message of the stretch
		n := "?"
		for i := len(c.Messages) - 1; i >= 0; i-- {
			if c.Messages[i].Role == "user" {
				n = strings.TrimPrefix(c.Messages[i].Content, "note ")
				break
			}
		}
		return modeltest.Reply{Reasoning: "Now I answer at length.", Content: "answer " + n + ": " + strings.Repeat("A long explanation of the note. ", 90)}
	}
}

// TestLongSessionCompacts is the bar: a 60-turn session with long answers and tool
// calls on a 32K window (enforced by the server) answers every turn with no request
// refused, logs compactions (the raw events stay), summarises in requests that re-send
// the conversation's prefix (cache hits), and a resumed session loads the compacted view
// byte for byte and goes on.
func TestLongSessionCompacts(t *testing.T) {
	e := newEnv(t, envOptions{
		model: modeltest.Options{ContextWindow: 32768, Reply: longSession},
		chat:  func(c *openaicompat.ChatConfig) { c.ContextWindow = 32768 },
		agent: map[string]any{"permissions": map[string]any{"default": "allow"}},
	})
	s := e.start(agent.StartOptions{})
	const turns = 60
	for i := 1; i <= turns; i++ {
		end := e.send(s, fmt.Sprintf("note %d", i))
		if end.Reason != session.StopDone || !strings.HasPrefix(end.Text, fmt.Sprintf("answer %d: ", i)) {
			t.Fatalf("turn %d: %+v", i, end)
		}
	}
	if r := e.srv.Rejections(); len(r) > 0 {
		t.Fatalf("rejections: %v", r)
	}
	events := s.Events()
	var compactions []*session.Compaction
	users := 0
	for _, ev := range events {
		switch ev.Type {
		case session.EventCompaction:
			compactions = append(compactions, ev.Compaction)
		case session.EventUser:
			users++
		}
	}
	if len(compactions) < 2 || users != turns {
		t.Fatalf("%d compactions, %d user events in the log", len(compactions), users)
	}
	for _, c := range compactions {
		if c.Trigger != agent.CompactAuto || c.Summary == "" || c.TokensAfter >= c.TokensBefore || c.Keep == 0 {
			t.Errorf("compaction %+v", c)
		}
	}
	// The summary requests re-send the conversation's prefix: the cache serves most of it.
	hits, prompt := 0, 0
	for _, r := range e.srv.Accepted() {
		if strings.Contains(string(r.Body), summaryQuestion) {
			hits += r.CacheHitTokens
			prompt += r.PromptTokens
		}
	}
	t.Logf("%d turns, %d requests, %d compactions; summary requests: %d of %d prompt tokens cache hits (%.1f %%)",
		turns, len(e.srv.Accepted()), len(compactions), hits, prompt, 100*float64(hits)/float64(prompt))
	if float64(hits) < 0.8*float64(prompt) {
		t.Errorf("summary requests: %d of %d prompt tokens were cache hits", hits, prompt)
	}
	// The view of the log is the live history.
	live := s.History()
	if hist, _ := session.History(events); !sameJSON(hist, live) {
		t.Fatal("the log's view differs from the live history")
	}
	last := e.srv.Accepted()
	lastPrompt := last[len(last)-1].Prompt
	r := e.reopen(s)
	if !sameJSON(r.History(), live) {
		t.Fatal("the resumed history differs from the one the model saw")
	}
	end := e.send(r, fmt.Sprintf("note %d", turns+1))
	if end.Reason != session.StopDone || !strings.HasPrefix(end.Text, fmt.Sprintf("answer %d: ", turns+1)) {
		t.Fatalf("after resume: %+v", end)
	}
	after := e.srv.Accepted()
	first := after[len(last)]
	if n := modeltest.CommonPrefix(lastPrompt, first.Prompt); n < len(lastPrompt)*9/10 {
		t.Errorf("the first request after resume shares %d of %d bytes with the last before", n, len(lastPrompt))
	}
}

// TestCompactOnDemand: /compact (Session.Compact) summarises with the focus given, keeps
// the latest exchange verbatim, refuses while nothing can be compacted, and the next
// turn's request starts with the summary.
func TestCompactOnDemand(t *testing.T) {
	var focus string
	e := newEnv(t, envOptions{
		model: modeltest.Options{Reply: func(c *modeltest.Call) modeltest.Reply {
			if last := c.Messages[len(c.Messages)-1]; strings.HasPrefix(last.Content, summaryQuestion) {
				focus = last.Content
				return modeltest.Reply{Content: "The user said hello twice."}
			}
			return modeltest.Reply{Content: "hi"}
		}},
		agent: map[string]any{"sessionsDir": "-"},
	})
	s := e.start(agent.StartOptions{})
	if _, err := s.Compact(ctxtest.Wait(t), ""); !errors.Is(err, agent.ErrNothingToCompact) {
		t.Fatalf("an empty session: %v", err)
	}
	e.send(s, "hello")
	e.send(s, "hello again")
	c, err := s.Compact(ctxtest.Wait(t), "the greetings")
	if err != nil {
		t.Fatal(err)
	}
	if c.Trigger != agent.CompactManual || c.Summary != "The user said hello twice." || c.Summarized != 2 || !strings.Contains(focus, "Give particular attention to: the greetings") {
		t.Fatalf("compaction %+v (question %q)", c, focus)
	}
	hist := s.History()
	if len(hist) != 3 || !strings.Contains(hist[0].Content, "<compacted-summary>\nThe user said hello twice.\n</compacted-summary>") || hist[1].Content != "hello again" {
		t.Fatalf("history %+v", hist)
	}
	e.send(s, "third")
	reqs := e.srv.Accepted()
	if msgs := requestMessages(t, reqs[len(reqs)-1]); len(msgs) != 5 || !strings.Contains(msgs[1], "<compacted-summary>") {
		t.Fatalf("the request after /compact: %q", msgs)
	}
}

// TestOverflowCompactsWithinTheTurn: when the provider refuses a request as too long
// (the estimate was off: automatic compaction is off here), the turn compacts and sends
// again, and the turn is answered.
func TestOverflowCompactsWithinTheTurn(t *testing.T) {
	e := newEnv(t, envOptions{
		model: modeltest.Options{ContextWindow: 8192, ExpectRejections: true, Reply: longSession},
		chat:  func(c *openaicompat.ChatConfig) { c.ContextWindow = 8192 },
		agent: map[string]any{"permissions": map[string]any{"default": "allow"}, "compaction": map[string]any{"threshold": -1}},
	})
	s := e.start(agent.StartOptions{})
	for i := 1; i <= 8; i++ {
		end := e.send(s, fmt.Sprintf("note %d", i))
		if end.Reason != session.StopDone || !strings.HasPrefix(end.Text, fmt.Sprintf("answer %d: ", i)) {
			t.Fatalf("turn %d: %+v", i, end)
		}
	}
	overflow := 0
	for _, ev := range s.Events() {
		if ev.Type == session.EventCompaction && ev.Compaction.Trigger == agent.CompactOverflow {
			overflow++
		}
	}
	if len(e.srv.Rejections()) == 0 || overflow == 0 {
		t.Fatalf("%d refusals, %d overflow compactions", len(e.srv.Rejections()), overflow)
	}
}

func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
