package agent_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/plugins/agent"
	"github.com/cordisgo/harness/plugins/agent/session"
)

// requestMessages returns the role and content of each message of a request.
func requestMessages(t *testing.T, r modeltest.Request) []string {
	t.Helper()
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range body.Messages {
		out = append(out, m.Role+": "+m.Content)
	}
	return out
}

// TestGrounding: the preamble (the date, the working directory) and the project
// instructions — the user's, the repository root's, the working directory's, in that
// order, attributed, the cap applied — are in the system prompt; a file changed during the
// session reaches the model as a message before the next user message, the system prompt
// byte for byte the same, and a resumed session has that message in its history.
func TestGrounding(t *testing.T) {
	repo, sub, cfg := agent.InstructionTree(t, "Answer briefly.", "Use tabs.", strings.Repeat("long ", 100))
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Chdir(sub)
	e := newEnv(t, envOptions{
		model: modeltest.Options{Reply: func(*modeltest.Call) modeltest.Reply { return modeltest.Reply{Content: "ok"} }},
		agent: map[string]any{"instructions": map[string]any{"maxBytes": 100}},
	})
	s := e.start(agent.StartOptions{})
	e.send(s, "first")
	first := requestMessages(t, e.srv.Accepted()[0])
	system := first[0]
	want := []string{
		"Today is " + time.Now().Format(time.DateOnly) + ".", "The working directory is " + sub + ",",
		"# User instructions (" + filepath.Join(cfg, "harness", "AGENTS.md") + ")\n\nAnswer briefly.",
		"# Project instructions (" + filepath.Join(repo, "AGENTS.md") + ")\n\nUse tabs.",
		"# Project instructions (" + filepath.Join(sub, "AGENTS.md") + ")\n\nlong long",
		"[cut here: the file has 499 bytes, past the cap on project instructions",
	}
	at := 0
	for _, w := range want {
		i := strings.Index(system[at:], w)
		if i < 0 {
			t.Fatalf("the system prompt lacks %q after byte %d:\n%s", w, at, system)
		}
		at += i
	}

	// The root's file changes: the next request carries it as a message; the prompt stays.
	if err := os.WriteFile(filepath.Join(repo, "AGENTS.md"), []byte("Use spaces, not tabs."), 0o600); err != nil {
		t.Fatal(err)
	}
	e.send(s, "second")
	reqs := e.srv.Accepted()
	second := requestMessages(t, reqs[len(reqs)-1])
	if second[0] != system {
		t.Errorf("the system prompt changed:\n%s\n---\n%s", system, second[0])
	}
	n := len(second)
	if n < 3 || second[n-1] != "user: second" || !strings.Contains(second[n-2], "Use spaces, not tabs.") || strings.Contains(second[n-2], "Answer briefly") {
		t.Fatalf("the change is not a message before the user's: %q", second)
	}
	e.send(s, "third") // nothing changed: no message
	reqs = e.srv.Accepted()
	if third := requestMessages(t, reqs[len(reqs)-1]); len(third) != n+2 {
		t.Errorf("%d messages after an unchanged turn, want %d", len(third), n+2)
	}
	r := e.reopen(s)
	var found bool
	for _, m := range r.History() {
		found = found || strings.Contains(m.Content, "Use spaces, not tabs.")
	}
	events, _ := e.svc.Store().Read(s.ID())
	var contexts int
	for _, ev := range events {
		if ev.Type == session.EventContext {
			contexts++
		}
	}
	if !found || contexts != 1 {
		t.Errorf("resumed history has the change: %v; %d context events", found, contexts)
	}
}

// TestPreambleReplaced: the profile's preamble replaces the agent's, with its variables
// filled in; "" removes it.
func TestPreambleReplaced(t *testing.T) {
	for _, c := range []struct{ preamble, want, not string }{
		{"You work in {{cwd}} on {{platform}}.", "You work in ", "You are the agent of the harness"},
		{"", "You are a test agent.", "You are the agent of the harness"},
	} {
		e := newEnv(t, envOptions{
			model: modeltest.Options{Replies: []modeltest.Reply{{Content: "ok"}}},
			agent: map[string]any{"preamble": c.preamble, "instructions": map[string]any{"file": "-"}},
		})
		e.send(e.start(agent.StartOptions{}), "hi")
		system := requestMessages(t, e.srv.Accepted()[0])[0]
		if !strings.Contains(system, c.want) || strings.Contains(system, c.not) || strings.Contains(system, "{{") {
			t.Errorf("preamble %q: system prompt\n%s", c.preamble, system)
		}
	}
}
