package deferral_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/plugins/toolregistry/deferral"
	"github.com/cordisgo/harness/testkit/regtest"
	"github.com/cordisgo/harness/toolsearch"
	"github.com/cordisgo/harness/toolsearch/searcheval"
)

// The evaluation's data, which the deferral tests search too.
const (
	catalogFile = "../../../toolsearch/testdata/catalog.json"
	tasksFile   = "../../../toolsearch/testdata/tasks.tsv"
)

type sessionKey struct{}

// withSession is how an agent tells tool_search whose call it runs.
func withSession(cx context.Context, s string) context.Context {
	return context.WithValue(cx, sessionKey{}, s)
}

func sessionOf(cx context.Context) (any, bool) {
	s, ok := cx.Value(sessionKey{}).(string)
	return s, ok
}

// fleet mounts a registry with the catalog's tools, a local tool "now", and the deferrer's
// tool_search (see registerFleet).
func fleet(t *testing.T, o deferral.Options) (*ctx.Context, *toolregistry.Registry, *deferral.Deferrer) {
	t.Helper()
	servers, err := toolsearch.ReadCatalog(catalogFile)
	if err != nil {
		t.Fatal(err)
	}
	return registerFleet(t, servers, o, toolregistry.Tool{Name: "now", Description: "The current time.", Execute: echo})
}

// echo answers a call with the tool's name and its arguments.
func echo(_ context.Context, call *toolregistry.Call) (*toolregistry.Result, error) {
	return toolregistry.TextResult(call.Tool + " " + string(call.Args)), nil
}

// registerFleet mounts a registry with servers' tools registered as an MCP client would
// (regtest.Fleet; each one an echo), then the tools extra, then the deferrer's tool_search
// made with o; it returns the root context, the registry and the deferrer.
func registerFleet(t testing.TB, servers []toolsearch.Server, o deferral.Options, extra ...toolregistry.Tool) (*ctx.Context, *toolregistry.Registry, *deferral.Deferrer) {
	t.Helper()
	root, reg := regtest.Fleet(t, servers, echo)
	o.Session = sessionOf
	d := deferral.New(reg, o)
	for _, tl := range append(extra, d.Tool()) {
		if _, err := reg.Register(root, tl); err != nil {
			t.Fatal(err)
		}
	}
	return root, reg, d
}

func names(tools []toolregistry.Info) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}

func TestBelowThresholdNothingChanges(t *testing.T) {
	root, reg, d := fleet(t, deferral.Options{MaxTools: 1000, ContextShare: -1})
	visible := reg.List(root)
	got := d.Choose("s1", visible, 1_000_000)
	want := slices.DeleteFunc(slices.Clone(visible), func(i toolregistry.Info) bool { return i.Name == deferral.SearchToolName })
	if !slices.EqualFunc(got, want, func(a, b toolregistry.Info) bool { return a.Name == b.Name }) {
		t.Fatalf("below the threshold Choose changed the tools: %d of %d", len(got), len(want))
	}
}

func TestDeferredToolsAreFoundLoadedAndCallable(t *testing.T) {
	root, reg, d := fleet(t, deferral.Options{})
	visible := reg.List(root)
	if len(visible) < 300 {
		t.Fatalf("only %d tools visible", len(visible))
	}
	first := d.Choose("s1", visible, 128_000)
	if got := names(first); !slices.Equal(got, []string{"now", deferral.SearchToolName}) {
		t.Fatalf("first request's tools = %v, want the local tool and tool_search", got)
	}

	search := func(session, query string) *toolregistry.Result {
		t.Helper()
		args, _ := json.Marshal(map[string]any{"query": query, "limit": 3})
		res, err := reg.Execute(withSession(context.Background(), session), root, deferral.SearchToolName, args, toolregistry.ExecOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := search("s1", "open a bug report on the GitHub repo")
	text := res.Text()
	if !strings.Contains(text, "mcp__github__create_issue (server github, tool create_issue)") || !strings.Contains(text, "input schema: {") {
		t.Fatalf("tool_search result lacks the hit or its schema:\n%s", text)
	}
	second := d.Choose("s1", reg.List(root), 128_000)
	if !slices.Equal(names(second[:2]), names(first)) || !slices.Contains(names(second), "mcp__github__create_issue") {
		t.Fatalf("second request's tools = %v; want the first request's, then the found tools", names(second))
	}
	// the loaded definition is the registry's, schema bytes and all
	i := slices.IndexFunc(second, func(x toolregistry.Info) bool { return x.Name == "mcp__github__create_issue" })
	want, _ := reg.Lookup(root, "mcp__github__create_issue")
	if string(second[i].Parameters) != string(want.Parameters) {
		t.Fatal("a loaded tool's schema differs from the registered one")
	}
	search("s1", "take a screenshot of the page with playwright")
	third := d.Choose("s1", reg.List(root), 128_000)
	if !slices.Equal(names(third[:len(second)]), names(second)) || len(third) <= len(second) {
		t.Fatalf("a later search reordered the tools: %v then %v", names(second), names(third))
	}
	// searching again for a loaded tool loads nothing twice
	search("s1", "open a bug report on the GitHub repo")
	if again := d.Choose("s1", reg.List(root), 128_000); !slices.Equal(names(again), names(third)) {
		t.Fatalf("a repeated search changed the tools: %v", names(again))
	}
	// another session is untouched
	if other := d.Choose("s2", reg.List(root), 128_000); len(other) != 2 {
		t.Fatalf("session s2 got %v", names(other))
	}
	// the found tool is called through the native path, its schema checked
	if _, err := reg.Execute(context.Background(), root, "mcp__github__create_issue", json.RawMessage(`{"owner": 1}`), toolregistry.ExecOptions{}); err == nil {
		t.Fatal("arguments against the schema were accepted")
	} else if te := (*toolregistry.ToolError)(nil); !errors.As(err, &te) {
		t.Fatalf("err = %v, want a *ToolError", err)
	}
	d.End("s1")
	if got := d.Loaded("s1"); got != nil {
		t.Fatalf("after End: %v", got)
	}
}

// The servers' instructions (DeferOptions.Instructions) are ranked with their tools, and a
// change of them builds the index again.
func TestDeferredSearchRanksInstructions(t *testing.T) {
	instructions := map[string]string{"memory": "Remember the user's zebrafish notes here."}
	var mu sync.Mutex
	root, reg, _ := fleet(t, deferral.Options{Instructions: func(server string) string {
		mu.Lock()
		defer mu.Unlock()
		return instructions[server]
	}})
	search := func(session string) string {
		t.Helper()
		res, err := reg.Execute(withSession(context.Background(), session), root, deferral.SearchToolName,
			json.RawMessage(`{"query": "zebrafish", "limit": 3}`), toolregistry.ExecOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return res.Text()
	}
	if got := search("s1"); !strings.Contains(got, "(server memory, tool ") {
		t.Fatalf("a search for a word of memory's instructions found:\n%s", got)
	}
	mu.Lock()
	instructions = map[string]string{"postgres": "Zebrafish tables live in this database."}
	mu.Unlock()
	if got := search("s2"); !strings.Contains(got, "(server postgres, tool ") || strings.Contains(got, "(server memory,") {
		t.Fatalf("after the instructions changed the search found:\n%s", got)
	}
}

func TestThresholds(t *testing.T) {
	root, reg, _ := fleet(t, deferral.Options{})
	visible := reg.List(root)
	bytes := 0
	for _, v := range visible {
		bytes += deferral.DefinitionBytes(v)
	}
	tokens := bytes / deferral.BytesPerToken
	for _, tc := range []struct {
		name   string
		o      deferral.Options
		window int
		want   bool
	}{
		{"count", deferral.Options{MaxTools: 10, ContextShare: -1}, 0, true},
		{"count not reached", deferral.Options{MaxTools: 10000, ContextShare: -1}, 0, false},
		{"share of a small window", deferral.Options{MaxTools: -1}, tokens * 5, true},           // 20 % > 10 %
		{"share of a large window", deferral.Options{MaxTools: -1}, tokens * 20, false},         // 5 %
		{"custom share", deferral.Options{MaxTools: -1, ContextShare: 0.04}, tokens * 20, true}, // 5 % > 4 %
		{"unknown window", deferral.Options{MaxTools: -1}, 0, false},
	} {
		d := deferral.New(reg, tc.o)
		if got := d.Exceeds(visible, tc.window); got != tc.want {
			t.Errorf("%s: Exceeds = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestAlwaysLoad(t *testing.T) {
	root, reg, d := fleet(t, deferral.Options{AlwaysLoad: []string{"memory", "github/*_issue", "mcp__slack__slack_post_message"}})
	got := names(d.Choose("s", reg.List(root), 0))
	for _, want := range []string{"mcp__memory__read_graph", "mcp__github__create_issue", "mcp__github__update_issue", "mcp__slack__slack_post_message", "now", deferral.SearchToolName} {
		if !slices.Contains(got, want) {
			t.Errorf("%s is not always loaded: %v", want, got)
		}
	}
	if slices.Contains(got, "mcp__github__create_pull_request") {
		t.Errorf("github/create_pull_request loaded: %v", got)
	}
	if got[len(got)-1] != deferral.SearchToolName {
		t.Errorf("tool_search is not after the always-loaded tools: %v", got)
	}
}

// tool_search takes several queries at once: one section per query, every hit loaded, a tool
// found twice shown once with its schema.
func TestSearchSeveralQueries(t *testing.T) {
	root, reg, d := fleet(t, deferral.Options{})
	call := func(args string) (*toolregistry.Result, error) {
		return reg.Execute(withSession(context.Background(), "s1"), root, deferral.SearchToolName, json.RawMessage(args), toolregistry.ExecOptions{})
	}
	res, err := call(`{"queries": ["open a bug report on the GitHub repo", "take a screenshot of the page with playwright", "file a GitHub issue"], "limit": 2}`)
	if err != nil {
		t.Fatal(err)
	}
	text := res.Text()
	for _, want := range []string{`For "open a bug report on the GitHub repo": `, `For "take a screenshot of the page with playwright": `,
		"mcp__github__create_issue (server github", "mcp__playwright__browser_take_screenshot (server playwright"} {
		if !strings.Contains(text, want) {
			t.Errorf("result lacks %q:\n%s", want, text)
		}
	}
	var doc struct {
		Tools   []toolsearch.Hit       `json:"tools"`
		Queries []toolsearch.QueryHits `json:"queries"`
	}
	if err := json.Unmarshal(res.Structured, &doc); err != nil || len(doc.Queries) != 3 || len(doc.Tools) < 3 {
		t.Fatalf("structured %s: %v", res.Structured, err)
	}
	// create_issue, found by the first and the third query, carries its schema once
	schemas := 0
	for _, q := range doc.Queries {
		for _, h := range q.Hits {
			if h.PublicName == "mcp__github__create_issue" && h.InputSchema != nil {
				schemas++
			}
		}
	}
	if schemas != 1 {
		t.Errorf("create_issue's schema shown %d times, want once: %s", schemas, res.Structured)
	}
	loaded := d.Loaded("s1")
	for _, h := range doc.Tools {
		if !slices.Contains(loaded, h.PublicName) {
			t.Errorf("%s found but not loaded: %v", h.PublicName, loaded)
		}
	}
	if _, err := call(`{"queries": []}`); err == nil || !strings.Contains(err.Error(), "query is empty") {
		t.Errorf("no query: %v", err)
	}
	if _, err := call(`{"queries": ["a","b","c","d","e","f","g","h","i"]}`); err == nil || !strings.Contains(err.Error(), "at most 8") {
		t.Errorf("nine queries: %v", err)
	}
}

// With deferTools.embeddings, tool_search fuses an OpenAI-compatible endpoint's embeddings
// with the words: the tools are embedded once, each query at its search; a refused model
// leaves the lexical ranking and says why in the structured result.
func TestDeferredSearchWithEmbeddings(t *testing.T) {
	srv := modeltest.New(t, modeltest.Options{ExpectRejections: true})
	t.Setenv("TOOLSEARCH_TEST_EMBED_KEY", srv.Key)
	o := deferral.Options{Embeddings: &toolsearch.EmbeddingsOptions{BaseURL: srv.URL + "/v1", Model: modeltest.EmbeddingModel, APIKeyEnv: "TOOLSEARCH_TEST_EMBED_KEY"}}
	root, reg, _ := fleet(t, o)
	search := func(q string) *toolregistry.Result {
		t.Helper()
		args, _ := json.Marshal(map[string]any{"query": q, "limit": 3})
		res, err := reg.Execute(withSession(context.Background(), "s"), root, deferral.SearchToolName, args, toolregistry.ExecOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if got := search("create an issue on GitHub").Text(); !strings.Contains(got, "mcp__github__create_issue") {
		t.Fatalf("with embeddings:\n%s", got)
	}
	search("take a screenshot of the page")
	reqs := srv.EmbeddingsRequests()
	tools := 0
	for _, r := range reqs {
		if r.Status != 200 {
			t.Fatalf("refused: %+v", r)
		}
		tools += r.Inputs
	}
	if tools != 315+2 {
		t.Fatalf("%d texts embedded in %d requests, want the 315 tools once and 2 queries", tools, len(reqs))
	}
	o.Embeddings.Model = "no-such-model"
	root, reg, _ = fleet(t, o)
	res := search("open a bug report on the GitHub repo")
	if !strings.Contains(res.Text(), "mcp__github__create_issue") || !strings.Contains(string(res.Structured), `"embeddingsError"`) ||
		strings.Contains(string(res.Structured), srv.Key) {
		t.Fatalf("a refused model: %s\n%s", res.Text(), res.Structured)
	}
	if err := (&toolsearch.EmbeddingsOptions{Model: "m"}).Validate(); err == nil || !strings.Contains(err.Error(), "baseURL") {
		t.Errorf("Validate without a base URL: %v", err)
	}
}

// TestAgentToolsMarked: tool_search and call_tool are the agent's own tools (Meta "harness":
// "agent"), so the gateway does not offer them to its clients, who have no session of the
// agent for them to load tools into; tool_search stays read-only.
func TestAgentToolsMarked(t *testing.T) {
	_, _, d := fleet(t, deferral.Options{MaxTools: 1000, ContextShare: -1})
	for _, tl := range []toolregistry.Tool{d.Tool(), d.CallTool()} {
		if tl.Meta["harness"] != "agent" {
			t.Errorf("%s: Meta %v, want harness=agent", tl.Name, tl.Meta)
		}
	}
	if d.Tool().Meta["readOnlyHint"] != "true" {
		t.Errorf("tool_search is not read-only: %v", d.Tool().Meta)
	}
}

// FormatHits names the other servers that offer a hit's tool (the search folds them into
// the hit: TestTwinsFold in toolsearch).
func TestFormatHitsNamesOtherServers(t *testing.T) {
	hit := toolsearch.Hit{Server: "fs", Name: "read_file", PublicName: "mcp__fs__read_file", Purpose: "Read a file.", Also: []string{"fs2", "fs3"}}
	if got := deferral.FormatHits("read a file", []toolsearch.Hit{hit}); !strings.Contains(got, "also on fs2, fs3") {
		t.Errorf("FormatHits does not name the other servers:\n%s", got)
	}
}

// wireTool is a tool definition as an OpenAI-compatible request carries it.
type wireTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

func wireBytes(tools []toolregistry.Info) int {
	defs := make([]wireTool, len(tools))
	for i, t := range tools {
		defs[i].Type = "function"
		defs[i].Function.Name, defs[i].Function.Description, defs[i].Function.Parameters = t.Name, t.Description, t.Parameters
	}
	b, err := json.Marshal(defs)
	if err != nil {
		panic(err)
	}
	return len(b)
}

// TestRequestBytes measures the tool definitions a 10-turn session sends with 1,260 tools
// visible: every turn the model searches once (three hits loaded) and then calls a found
// tool, so a turn is two requests. It prints bytes per request next to sending every
// schema, and checks the bound: the first request's definitions are at most 3 %
// of all schemas.
func TestRequestBytes(t *testing.T) {
	servers, err := toolsearch.ReadCatalog(catalogFile)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := searcheval.ReadTasks(tasksFile)
	if err != nil {
		t.Fatal(err)
	}
	// The catalog four times over: 1,260 real tools, each with three near-duplicates.
	root, reg, d := registerFleet(t, regtest.Grow(servers, 4*regtest.ToolCount(servers)), deferral.Options{})
	visible := reg.List(root)
	all := wireBytes(slices.DeleteFunc(slices.Clone(visible), func(i toolregistry.Info) bool { return i.Name == deferral.SearchToolName }))
	var b strings.Builder
	fmt.Fprintf(&b, "%d tools visible; all schemas: %d bytes per request\n", len(visible)-1, all)
	fmt.Fprintf(&b, "turn  request  tools  bytes  share-of-all  tool_search-result-bytes\n")
	total, results := 0, 0
	var first int
	for turn := 1; turn <= 10; turn++ {
		before := d.Choose("bench", reg.List(root), 1_000_000)
		n := wireBytes(before)
		if turn == 1 {
			first = n
		}
		total += n
		fmt.Fprintf(&b, "%4d  %7d  %5d  %5d  %11.2f%%\n", turn, 1, len(before), n, 100*float64(n)/float64(all))
		args, _ := json.Marshal(map[string]any{"query": tasks[turn*7].Query, "limit": 3})
		res, err := reg.Execute(withSession(context.Background(), "bench"), root, deferral.SearchToolName, args, toolregistry.ExecOptions{})
		if err != nil {
			t.Fatal(err)
		}
		results += len(res.Text())
		after := d.Choose("bench", reg.List(root), 1_000_000)
		if !slices.EqualFunc(after[:len(before)], before, func(a, b toolregistry.Info) bool { return a.Name == b.Name }) {
			t.Fatal("the loaded tools did not extend the previous request's tools")
		}
		n = wireBytes(after)
		total += n
		fmt.Fprintf(&b, "%4d  %7d  %5d  %5d  %11.2f%%  %d\n", turn, 2, len(after), n, 100*float64(n)/float64(all), len(res.Text()))
	}
	fmt.Fprintf(&b, "20 requests: %d bytes of tool definitions (+%d bytes of tool_search results) vs %d with all schemas: %.1f %%\n",
		total, results, 20*all, 100*float64(total+results)/float64(20*all))
	t.Log("\n" + b.String())
	if share := float64(first) / float64(all); share > 0.03 {
		t.Errorf("first request's tool definitions: %d bytes, %.2f %% of all schemas (%d); want at most 3 %%", first, 100*share, all)
	}
}
