package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/internal/redact"
	"github.com/cordisgo/harness/plugins/agent"
	"github.com/cordisgo/harness/secrets"
)

// TestSessionLogMasksSecrets: a secret the host knows (substituted into a configuration
// through the resolver, as the MCP clients and the model plugin do) never reaches the
// session's files — not in a tool's result, not in the model's own arguments that repeat
// it, not in a large result saved for read_tool_result — while the live conversation the
// model sees keeps it, so the cached prefix is not broken. A resumed session reads the
// masked text.
func TestSessionLogMasksSecrets(t *testing.T) {
	const token = "ghp_s3cretTOKENvalue0123456789"
	scrub := new(secrets.Scrubber)
	r := &secrets.Resolver{LookupEnv: func(k string) (string, bool) { return token, k == "GITHUB_TOKEN" }, Scrubber: scrub}
	if _, err := r.Expand("Bearer ${GITHUB_TOKEN}"); err != nil {
		t.Fatal(err)
	}
	big := "token=" + token + " " + strings.Repeat("x", 12000)
	e := newEnv(t, envOptions{
		scrubber: scrub,
		model: modeltest.Options{Replies: []modeltest.Reply{
			{ToolCalls: []modeltest.ToolCall{
				{ID: "e1", Name: "mcp__demo__echo", Arguments: `{"text": "the env says GITHUB_TOKEN=` + token + `"}`},
				{ID: "e2", Name: "mcp__demo__echo", Arguments: `{"text": "` + big + `"}`},
			}},
			{Content: "done"},
		}},
		agent: map[string]any{"largeResultBytes": 10000},
	})
	s := e.start(agent.StartOptions{})
	e.send(s, "show me the env")

	// The model got the results as the tools returned them.
	reqs := e.srv.Accepted()
	if len(reqs) != 2 || !strings.Contains(strings.Join(toolMessages(reqs[1]), "\n"), "GITHUB_TOKEN="+token) {
		t.Fatalf("the model's second request lacks the tool's result as returned: %d requests", len(reqs))
	}
	// Nothing stored holds the token; the log has the marker where it was.
	logData, err := os.ReadFile(filepath.Join(s.Dir(), "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(logData), token) {
		t.Error("events.jsonl holds the secret")
	}
	if n := strings.Count(string(logData), redact.Marker); n < 3 { // both calls' arguments, the first result
		t.Errorf("events.jsonl has %d markers, want at least 3", n)
	}
	saved, err := os.ReadFile(filepath.Join(s.Dir(), "results", "e2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(saved), token) || !strings.HasPrefix(string(saved), "token="+redact.Marker) {
		t.Errorf("saved result: %.80q", saved)
	}
	resumed := e.reopen(s)
	var all strings.Builder
	for _, m := range resumed.History() {
		all.WriteString(m.Content)
		for _, c := range m.ToolCalls {
			all.WriteString(c.Arguments)
		}
	}
	if strings.Contains(all.String(), token) || !strings.Contains(all.String(), "GITHUB_TOKEN="+redact.Marker) {
		t.Errorf("resumed history: the secret is %v, the marker is %v", strings.Contains(all.String(), token), strings.Contains(all.String(), redact.Marker))
	}
}
