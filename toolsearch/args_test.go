package toolsearch

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// The argument values of a task are told apart from its topic, each with its kind.
func TestScanArgs(t *testing.T) {
	isName := func(s string) bool { return s == "read_text_file" }
	for _, tc := range []struct {
		query  string
		rest   string
		kinds  []argKind
		hints  []string
		quoted []string
	}{
		{"Create a directory at ./test_project_root/docs", "Create a directory at", []argKind{argPath}, nil, nil},
		{"rename report-old.pdf to report.pdf", "rename to", []argKind{argPath, argPath}, []string{"pdf", "pdf"}, nil},
		{"what's inside ~/projects/harness/cmd", "what's inside", []argKind{argPath}, nil, nil},
		{`copy C:\Users\me\notes.txt`, "copy", []argKind{argPath}, []string{"txt"}, nil},
		{"summarize https://www.youtube.com/watch?v=abc", "summarize", []argKind{argURL}, []string{"youtube"}, nil},
		{"is coolstartup.io available", "is available", []argKind{argURL}, []string{"coolstartup"}, nil},
		{"email the report to alice@example.com.", "email the report to", []argKind{argEmail}, nil, nil},
		{"fork octocat/hello-world", "fork", []argKind{argRepo}, nil, nil},
		{"what's the status of ENG-1423?", "what's the status of", []argKind{argIssue}, nil, nil},
		{"close #17 and ping @alice in #general", "close and ping in", []argKind{argIssue, argUser, argChannel}, nil, nil},
		{"what did commit 9f8e7d6c change", "what did commit change", []argKind{argID}, nil, nil},
		{"ssh to 10.0.0.12:22", "ssh to", []argKind{argHost}, nil, nil},
		{"events on 2026-12-04 and 12/05/2026", "events on and", []argKind{argDate, argDate}, nil, nil},
		{"schedule a meeting on Tuesday at 3pm", "schedule a meeting on at", []argKind{argDate, argDate}, nil, nil},
		{"the emails from last month", "the emails from", []argKind{argDate}, nil, nil},
		{"run `npm test` in the repo", "run in the repo", []argKind{argCommand}, nil, nil},
		{"ls -la /etc/nginx", "", []argKind{argCommand, argPath}, nil, nil},
		{`search the web for "red running shoes"`, "search the web for", nil, nil, []string{"red running shoes"}},
		{"don't touch 'the' file", "don't file", nil, nil, []string{"the"}},
		{"call `read_text_file` on it", "call read_text_file on it", nil, nil, nil},
		{"make a folder called backup", "make a folder called", nil, nil, []string{"backup"}},
		{"在 /data 下新建一个叫 backup 的文件夹", "在 下新建一个叫 的文件夹", []argKind{argPath}, nil, []string{"backup"}},
		{"读取./README.md文件的内容", "读取 文件的内容", []argKind{argPath}, []string{"md"}, nil},
		{"open the v1.2 notes", "open the v1.2 notes", nil, nil, nil},
		{"write an email but don't send it yet", "write an email but don't it yet", nil, nil, nil},
		{"edit config.yaml, do not rewrite it", "edit do not it", []argKind{argPath}, []string{"yaml"}, nil},
	} {
		a := scanArgs(tc.query, isName)
		var kinds []argKind
		for _, k := range a.kinds {
			kinds = append(kinds, k[0])
		}
		if strings.Join(strings.Fields(a.rest), " ") != tc.rest || !slices.Equal(kinds, tc.kinds) ||
			!slices.Equal(a.hints, tc.hints) || !slices.Equal(a.quoted, tc.quoted) {
			t.Errorf("scanArgs(%q) = rest %q kinds %v hints %q quoted %q;\nwant rest %q kinds %v hints %q quoted %q",
				tc.query, a.rest, kinds, a.hints, a.quoted, tc.rest, tc.kinds, tc.hints, tc.quoted)
		}
	}
	if a := scanArgs("fork octocat/hello-world", isName); len(a.kinds) != 1 || !slices.Equal(a.kinds[0], []argKind{argRepo, argPath}) {
		t.Errorf("owner/name: kinds %v, want a repository or a path", a.kinds)
	}
}

// The kinds of value a tool takes come from its parameters' names, nested ones one level
// down.
func TestParamKinds(t *testing.T) {
	var w schemaWalker
	kinds := func(schema string) uint16 {
		w.text([]byte(schema))
		return paramKindsOf(w.propNames)
	}
	if got := kinds(`{"type":"object","properties":{"filePath":{"type":"string"},"targetUrl":{"type":"string"},
		"options":{"type":"object","properties":{"recipient_email":{"type":"string"}}}}}`); got != 1<<argPath|1<<argURL|1<<argEmail {
		t.Errorf("kinds = %b", got)
	}
	if got := kinds(`{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer"}}}`); got != 0 {
		t.Errorf("kinds of query and limit = %b, want none", got)
	}
	if got := kinds(`not json`); got != 0 {
		t.Errorf("kinds of a malformed schema = %b", got)
	}
}

// A path in the task weighs as a path — tools that take one — and not as the words it is
// made of (issue 37's "Create a directory at ./test_project_root/docs", which ranked a
// tool about flaky tests in a project first).
func TestPathsWeighAsArguments(t *testing.T) {
	schema := func(props ...string) json.RawMessage {
		var b strings.Builder
		b.WriteString(`{"type":"object","properties":{`)
		for i, p := range props {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"` + p + `":{"type":"string"}`)
		}
		b.WriteString(`}}`)
		return json.RawMessage(b.String())
	}
	ix := New([]Server{
		{Name: "ci", Tools: []Tool{
			{Name: "find_flaky_tests", Description: "Find flaky tests of a project: the test results of the project's root pipeline, directory by directory.", InputSchema: schema("projectSlug")},
			{Name: "create_test_project", Description: "Create a test project.", InputSchema: schema("name")},
		}},
		{Name: "fs", Tools: []Tool{
			{Name: "create_directory", Description: "Create a new directory.", InputSchema: schema("path")},
			{Name: "read_file", Description: "Read a file.", InputSchema: schema("path")},
		}},
	})
	hits := ix.Search("Create a directory at ./test_project_root/docs", SearchOptions{})
	if len(hits) == 0 || hits[0].Name != "create_directory" {
		t.Fatalf("hits %v, want create_directory first", hits)
	}
}

// A tool offered by several servers is one hit that names the others, and the slots go to
// distinct tools.
func TestTwinsFold(t *testing.T) {
	read := Tool{Name: "read_file", Description: "Read the complete contents of a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}
	write := Tool{Name: "write_file", Description: "Write a file.", InputSchema: read.InputSchema}
	other := Tool{Name: "read_file", Description: "Page through one of the sandbox's files.", InputSchema: read.InputSchema}
	ix := New([]Server{
		{Name: "fs", Tools: []Tool{read, write}},
		{Name: "fs2", Tools: []Tool{read, write}},
		{Name: "fs3", Tools: []Tool{read, write}},
		{Name: "sandbox", Tools: []Tool{other}},
	})
	hits := ix.Search("read a file", SearchOptions{Limit: 3, Schemas: 1})
	if len(hits) != 3 {
		t.Fatalf("%d hits, want 3: %+v", len(hits), hits)
	}
	if hits[0].Name != "read_file" || hits[0].Server != "fs" || !slices.Equal(hits[0].Also, []string{"fs2", "fs3"}) || hits[0].InputSchema == nil {
		t.Errorf("first hit %+v, want fs's read_file, also on fs2 and fs3, with its schema", hits[0])
	}
	seen := map[string]bool{}
	for _, h := range hits {
		key := h.Name + "\x00" + h.Purpose
		if seen[key] {
			t.Errorf("the same tool twice: %+v", hits)
		}
		seen[key] = true
	}
	if !slices.ContainsFunc(hits, func(h Hit) bool { return h.Server == "sandbox" }) {
		t.Errorf("sandbox's read_file (another tool of the same name) is not a hit: %+v", hits)
	}
	if hits := ix.Search("read a file", SearchOptions{Server: "fs2"}); len(hits) == 0 || hits[0].Server != "fs2" || len(hits[0].Also) != 0 {
		t.Errorf("a search of one server: %+v", hits)
	}
}

// A typo is corrected towards the word as written, and towards the more frequent of equally
// near words.
func TestTyposAgainstWordsAsWritten(t *testing.T) {
	ix := New([]Server{{Name: "git", Tools: []Tool{
		{Name: "git_status", Description: "Show the working tree status."},
		{Name: "git_stash", Description: "Stash the changes in a dirty working directory."},
		{Name: "git_log", Description: "Show the commit logs."},
	}}})
	if hits := ix.Search("git stauts of the repo", SearchOptions{}); len(hits) == 0 || hits[0].Name != "git_status" {
		t.Fatalf("hits %v, want git_status first", hits)
	}
}

// A server is found by the names it publishes (its serverInfo), and by their Chinese names.
func TestServerAliases(t *testing.T) {
	servers, err := ParseCatalog("aliases.json", []byte(`{"servers": {
		"im": {"serverInfo": {"name": "lark-mcp", "title": "Feishu/Lark MCP Server"},
			"tools": [{"name": "message_create", "description": "Send a message to a chat."}]},
		"chat": {"tools": [{"name": "post_message", "description": "Send a message to a channel."}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(servers[1].Aliases, []string{"lark-mcp", "Feishu/Lark MCP Server"}) {
		t.Fatalf("aliases %q", servers[1].Aliases)
	}
	ix := New(servers)
	for _, q := range []string{"send a message on feishu", "在飞书群里发一条消息", "lark: send a message"} {
		if hits := ix.Search(q, SearchOptions{}); len(hits) == 0 || hits[0].Server != "im" {
			t.Errorf("%q: hits %+v, want im's tool first", q, hits)
		}
	}
}
