package app

import (
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cordisgo/harness/internal/modeltest"
)

// docsYAML returns the first YAML block of docs/agent.md after the heading.
func docsYAML(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile("../../../docs/agent.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("docs/agent.md has no heading %q", heading)
	}
	_, rest, ok = strings.Cut(rest, "```yaml\n")
	if !ok {
		t.Fatalf("docs/agent.md: no YAML block under %q", heading)
	}
	block, _, _ := strings.Cut(rest, "```")
	return block
}

// TestSubagentDocsExample runs the subagent profile of docs/agent.md as written, with the
// profile's two models on the local model server: the main agent delegates to the
// reviewer, which runs with its own model, prompt and tools.
func TestSubagentDocsExample(t *testing.T) {
	var mu sync.Mutex
	var reviewerTools []string
	var reviewerSystem string
	srv := modeltest.New(t, modeltest.Options{Reply: func(c *modeltest.Call) modeltest.Reply {
		if c.Model == modeltest.ModelPro { // the reviewer: model pro
			mu.Lock()
			reviewerTools, reviewerSystem = c.Tools, c.Messages[0].Content
			mu.Unlock()
			return modeltest.Reply{Content: "One problem: the name is misspelled."}
		}
		if last := c.Messages[len(c.Messages)-1]; last.Role == "tool" {
			return modeltest.Reply{Content: "The reviewer says: " + last.Content}
		}
		return modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "agent__reviewer", Arguments: `{"task": "review the change"}`}}}
	}})
	models := "  model:\n    use: model\n    config:\n      default: flash\n      models:\n" +
		"        flash: {provider: deepseek, baseURL: \"" + srv.URL + "\", apiKey: \"" + srv.Key + "\"}\n" +
		"        pro: {provider: deepseek, baseURL: \"" + srv.URL + "\", apiKey: \"" + srv.Key + "\", model: deepseek-v4-pro}\n"
	p := writeFile(t, t.TempDir(), "agents.yaml", "extends: default\n"+docsYAML(t, "## Subagents")+models)
	r := run(t, nil, "-p", p, "ask", "review my change")
	r.expect(t, ExitOK, "The reviewer says: One problem: the name is misspelled.", "")
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []string{"mcp__demo__echo", "mcp__demo__add"} {
		if !slices.Contains(reviewerTools, want) {
			t.Errorf("the reviewer's tools %v lack %s", reviewerTools, want)
		}
	}
	if slices.Contains(reviewerTools, "mcp__demo__slow") || slices.Contains(reviewerTools, "agent__reviewer") {
		t.Errorf("the reviewer's tools %v are not narrowed", reviewerTools)
	}
	if !strings.Contains(reviewerSystem, "You review changes. Be specific.") {
		t.Errorf("the reviewer's system prompt lacks its own prompt:\n%s", reviewerSystem)
	}
}

// TestAskAgentMountFailure: an agent that fails to mount (here a second agent in the root
// layer) makes ask and chat fail with the reason, exit 2, before any model request.
func TestAskAgentMountFailure(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{})
	p := agentProfile(t, srv, "  agent:\n    use: agent\n  other:\n    use: agent\n")
	run(t, nil, "-p", p, "ask", "hello").expect(t, ExitUsage, "", "an agent did not start: plugins.")
	runWith(t, t.Context(), testOptions(), "hello\n", nil, "-p", p, "chat").expect(t, ExitUsage, "", "an agent did not start: plugins.")
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d model requests, want none", n)
	}
}
