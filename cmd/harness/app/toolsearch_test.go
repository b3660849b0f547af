package app

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestToolsSearchCatalog(t *testing.T) {
	t.Parallel()
	catalog := "../../../toolsearch/testdata/catalog.json"
	r := run(t, nil, "tools", "search", "--catalog", catalog, "--json", "--schemas", "1", "crete", "a", "pul", "request", "on", "github")
	r.expect(t, ExitOK, "", "")
	var hits []struct {
		Server, Name, PublicName string
		Score                    float64
		InputSchema              json.RawMessage
	}
	if err := json.Unmarshal([]byte(r.stdout), &hits); err != nil {
		t.Fatalf("--json output is not an array of hits: %v\n%s", err, r.stdout)
	}
	if len(hits) != 5 || hits[0].Server != "github" || hits[0].Name != "create_pull_request" ||
		hits[0].PublicName != "mcp__github__create_pull_request" || hits[0].Score <= hits[1].Score ||
		hits[0].InputSchema == nil || hits[1].InputSchema != nil {
		t.Fatalf("hits = %+v", hits)
	}
	run(t, nil, "tools", "search", "--catalog", catalog, "读取文件内容").expect(t, ExitOK, "filesystem/read_text_file", "")
	run(t, nil, "tools", "search", "--catalog", catalog, "--server", "githb", "x").expect(t, ExitUsage, "", `(did you mean "github"?)`)
	run(t, nil, "tools", "search", "--catalog", "nope.json", "x").expect(t, ExitUsage, "", "nope.json")
	run(t, nil, "tools", "search").expect(t, ExitUsage, "", "requires at least 1 arg")
	r = run(t, nil, "tools", "search", "--catalog", catalog, "--json", "zzzzqqq")
	if strings.TrimSpace(r.stdout) != "[]" {
		t.Fatalf("no hits: stdout %q", r.stdout)
	}
}

func TestToolsSearchLiveFleet(t *testing.T) {
	t.Parallel()
	run(t, nil, "tools", "search", "add", "two", "numbers").expect(t, ExitOK, "mcp__demo__add", "")
	// the servers' instructions are ranked too: "trying" is only in the demo server's
	r := run(t, nil, "tools", "search", "--json", "trying")
	if !strings.Contains(r.stdout, `"server": "demo"`) {
		t.Fatalf("a word of the demo server's instructions found: %s %s", r.stdout, r.stderr)
	}
}

// Several needs at once: one table per -q, or an array of {query, tools}.
func TestToolsSearchSeveralQueries(t *testing.T) {
	t.Parallel()
	catalog := "../../../toolsearch/testdata/catalog.json"
	r := run(t, nil, "tools", "search", "--catalog", catalog, "--limit", "2", "-q", "create a pull request on github", "-q", "take a screenshot with playwright")
	r.expect(t, ExitOK, `For "create a pull request on github":`, "")
	if !strings.Contains(r.stdout, `For "take a screenshot with playwright":`) || !strings.Contains(r.stdout, "github/create_pull_request") ||
		!strings.Contains(r.stdout, "playwright/browser_take_screenshot") {
		t.Fatalf("stdout:\n%s", r.stdout)
	}
	r = run(t, nil, "tools", "search", "--catalog", catalog, "--json", "-q", "read a file", "list the pods")
	var results []struct {
		Query string
		Tools []struct{ Server, Name string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &results); err != nil || len(results) != 2 || results[1].Query != "list the pods" ||
		len(results[1].Tools) == 0 || results[1].Tools[0].Server != "kubernetes" {
		t.Fatalf("--json with two queries: %v\n%s", err, r.stdout)
	}
}
