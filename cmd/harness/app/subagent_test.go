package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cordisgo/harness/host"
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
	// A running host with that profile: ask and chat refuse its agent the same way.
	env := testEnv(t)
	startRun(t, env, "-p", p, "run")
	run(t, env, "ask", "hello").expect(t, ExitUsage, "", "an agent did not start: plugins.")
	runWith(t, t.Context(), testOptions(), "hello\n", env, "chat").expect(t, ExitUsage, "", "an agent did not start: plugins.")
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d model requests, want none", n)
	}
}

// TestPromptShowsAgentsMD: harness prompt, in a repository with AGENTS.md at its root and
// in the working directory, shows the agent's preamble and both files, attributed, the
// root's first.
func TestPromptShowsAgentsMD(t *testing.T) {
	repo := t.TempDir()
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(repo, "service")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, repo, "AGENTS.md", "Run go test ./... before saying it works.\n")
	writeFile(t, sub, "AGENTS.md", "This service speaks JSON only.\n")
	t.Chdir(sub)
	r := run(t, nil, "-p", "cli", "prompt")
	root := "# Project instructions (" + filepath.Join(repo, "AGENTS.md") + ")\n\nRun go test ./... before saying it works."
	inner := "# Project instructions (" + filepath.Join(sub, "AGENTS.md") + ")\n\nThis service speaks JSON only."
	r.expect(t, ExitOK, root, "")
	r.expect(t, ExitOK, inner, "")
	r.expect(t, ExitOK, "The working directory is "+sub, "")
	if strings.Index(r.stdout, root) > strings.Index(r.stdout, inner) {
		t.Errorf("the working directory's instructions come before the root's:\n%s", r.stdout)
	}
	r = run(t, nil, "-p", "cli", "prompt", "--json")
	var out struct {
		Sections []host.PromptSection
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range out.Sections {
		got[s.Name] = s.Owner
	}
	for _, name := range []string{"agent:preamble", "instructions:project", "instructions:project/service"} {
		if _, ok := got[name]; !ok {
			t.Errorf("no section %s: %v", name, got)
		}
	}
}
