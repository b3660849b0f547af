//go:build unix

// Package gatewayinterop tests the harness's MCP gateway (gateway) with third-party
// components from npm, pinned in package.json and package-lock.json here: the official
// TypeScript SDK client and the MCP Inspector CLI as downstream clients, and
// @modelcontextprotocol/server-everything as an upstream server next to the demo server.
package gatewayinterop

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/internal/npmci"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/testkit/gatewaytest"
	"github.com/cordisgo/harness/testkit/harnessbin"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(harnessbin.Main(m)) }

// suite is this directory's npm packages (the tests' working directory).
var suite = npmci.Suite{Name: "gatewayinterop", Dir: ".", Prefix: "tests/gatewayinterop"}

const token = "interop-token"

// gatewayURL serves a tree with the demo server (Streamable HTTP, in process) and
// server-everything (stdio, node) behind a gateway, and returns its base URL.
func gatewayURL(t *testing.T) string {
	t.Helper()
	url, _ := gatewayURLLogged(t)
	return url
}

// gatewayURLLogged is gatewayURL, with the tree's log kept.
func gatewayURLLogged(t *testing.T) (string, *logLines) {
	t.Helper()
	logs := &logLines{changed: make(chan struct{})}
	nodeBin := suite.Node(t)
	everything := suite.File(t, "@modelcontextprotocol/server-everything/dist/index.js")

	// As harness serve does: the clients offer elicitation and sampling, which the gateway
	// forwards to the calling session.
	root := gatewaytest.Tree(t, gatewaytest.TreeOptions{Logger: logs, Offer: true})
	mountDemo(t, root)
	var cfg mcpclient.Config
	cfg.Default()
	cfg.ServerName, cfg.Transport, cfg.Command, cfg.Args, cfg.FailOnStartupError = "everything", mcpclient.TransportStdio, nodeBin, []string{everything, "stdio"}, true
	ctxtest.MountActive(t, root, mcpclient.Plugin, cfg)

	_, url := gatewaytest.Serve(t, root, gateway.Options{}, gateway.HTTPOptions{Token: token, Addr: "127.0.0.1:0"})
	return url, logs
}

// logLines keeps the messages of a tree's log at info and above. It is safe for
// concurrent use.
type logLines struct {
	mu      sync.Mutex
	msgs    []string
	changed chan struct{} // closed and replaced at each message
}

func (l *logLines) Enabled(_ context.Context, lv slog.Level) bool { return lv >= slog.LevelInfo }
func (l *logLines) WithAttrs([]slog.Attr) slog.Handler            { return l }
func (l *logLines) WithGroup(string) slog.Handler                 { return l }

func (l *logLines) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, r.Message)
	close(l.changed)
	l.changed = make(chan struct{})
	return nil
}

// await waits (at most 10 s) until msg was logged.
func (l *logLines) await(t *testing.T, msg string) {
	t.Helper()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for {
		l.mu.Lock()
		found, changed := slices.Contains(l.msgs, msg), l.changed
		l.mu.Unlock()
		if found {
			return
		}
		select {
		case <-changed:
		case <-timeout.C:
			l.mu.Lock()
			defer l.mu.Unlock()
			t.Fatalf("%q was not logged within 10 s; the log:\n%s", msg, strings.Join(l.msgs, "\n"))
		}
	}
}

type tsOut struct {
	Server   struct{ Name string } `json:"server"`
	Results  []json.RawMessage     `json:"results"`
	Requests []json.RawMessage     `json:"requests"` // the server requests it answered
}

// ts runs the TypeScript SDK client with ops against url.
func ts(t *testing.T, url string, ops ...any) tsOut {
	t.Helper()
	return tsAnswering(t, url, nil, ops...)
}

// tsAnswering runs the TypeScript SDK client with ops against url, answering server
// requests as answers says (see client.mjs).
func tsAnswering(t *testing.T, url string, answers map[string]any, ops ...any) tsOut {
	t.Helper()
	b, _ := json.Marshal(ops)
	cx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	args := []string{"client.mjs", url, token, string(b)}
	if answers != nil {
		a, _ := json.Marshal(answers)
		args = append(args, string(a))
	}
	cmd := exec.CommandContext(cx, suite.Node(t), args...)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("client.mjs %s: %v\n%s", url, err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var o tsOut
	if err := json.Unmarshal(out, &o); err != nil {
		t.Fatalf("client.mjs output %s: %v", out, err)
	}
	return o
}

func op(method string, params any) []any { return []any{method, params} }

func contains(t *testing.T, what string, raw json.RawMessage, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(string(raw), s) {
			t.Errorf("%s lacks %s: %.600s", what, s, raw)
		}
	}
}

func TestTypeScriptClient(t *testing.T) {
	suite.File(t, "@modelcontextprotocol/sdk/package.json")
	base := gatewayURL(t)

	agg := ts(t, base+"/mcp",
		op("tools/list", map[string]any{}),
		op("tools/call", map[string]any{"name": "mcp__demo__echo", "arguments": map[string]any{"text": "from ts"}}),
		op("tools/call", map[string]any{"name": "mcp__everything__echo", "arguments": map[string]any{"message": "to everything"}}),
		op("resources/read", map[string]any{"uri": "demo://readme"}),
		op("prompts/list", map[string]any{}),
		op("tools/call", map[string]any{"name": "mcp__demo__echo", "arguments": map[string]any{"text": 7}}),
	)
	contains(t, "aggregated tools/list", agg.Results[0], `"mcp__demo__echo"`, `"mcp__everything__echo"`)
	contains(t, "demo echo", agg.Results[1], `"from ts"`)
	contains(t, "everything echo", agg.Results[2], `to everything`)
	contains(t, "resources/read", agg.Results[3], `harness-demo`)
	contains(t, "prompts/list", agg.Results[4], `"mcp__everything__`)
	contains(t, "invalid arguments", agg.Results[5], `"isError":true`)

	ev := ts(t, base+"/mcp/servers/everything",
		op("tools/list", map[string]any{}),
		op("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "raw"}}),
		op("prompts/list", map[string]any{}),
		op("resources/templates/list", map[string]any{}),
	)
	if ev.Server.Name == "harness-gateway" || ev.Server.Name == "" {
		t.Errorf("per-server route reports server %q, want the upstream's identity", ev.Server.Name)
	}
	contains(t, "per-server tools/list", ev.Results[0], `"name":"echo"`)
	if strings.Contains(string(ev.Results[0]), "mcp__") {
		t.Errorf("per-server route lists public names: %.300s", ev.Results[0])
	}
	contains(t, "per-server echo", ev.Results[1], `raw`)
	contains(t, "per-server prompts", ev.Results[2], `"prompts":[{`)
	contains(t, "per-server templates", ev.Results[3], `"resourceTemplates":[{`)

	demo := ts(t, base+"/mcp/servers/demo", op("resources/templates/list", map[string]any{}), op("resources/read", map[string]any{"uri": "demo://notes/9"}))
	contains(t, "demo templates", demo.Results[0], `demo://notes/{id}`)
	contains(t, "demo template read", demo.Results[1], `demo://notes/9`)
}

// TestInspectorCLI drives the routes with the MCP Inspector's CLI
// (@modelcontextprotocol/inspector-cli).
func TestInspectorCLI(t *testing.T) {
	entry := suite.File(t, "@modelcontextprotocol/inspector-cli/build/index.js")
	base := gatewayURL(t)
	inspect := func(url string, args ...string) string {
		t.Helper()
		cx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(cx, suite.Node(t), append([]string{entry, url, "--transport", "http", "--header", "Authorization: Bearer " + token}, args...)...)
		// The CLI reads its own package.json through a path relative to the working
		// directory: run it from its build directory.
		cmd.Dir = filepath.Dir(entry)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("inspector %s %v: %v\n%s", url, args, err, out)
		}
		return string(out)
	}
	if out := inspect(base+"/mcp", "--method", "tools/call", "--tool-name", "mcp__demo__echo", "--tool-arg", "text=inspected"); !strings.Contains(out, `"inspected"`) {
		t.Errorf("aggregated tools/call: %s", out)
	}
	if out := inspect(base+"/mcp/servers/everything", "--method", "tools/list"); !strings.Contains(out, `"echo"`) || strings.Contains(out, "mcp__everything__") {
		t.Errorf("per-server tools/list: %.400s", out)
	}
	if out := inspect(base+"/mcp/servers/demo", "--method", "resources/read", "--uri", "demo://config.json"); !strings.Contains(out, "demo://config.json") {
		t.Errorf("per-server resources/read: %.400s", out)
	}
	if out := inspect(base+"/mcp", "--method", "prompts/list"); !strings.Contains(out, "mcp__everything__") {
		t.Errorf("aggregated prompts/list: %.400s", out)
	}
}

// TestTypeScriptClientAnswersServerRequests: server-everything's trigger-elicitation-request
// and trigger-sampling-request, and the demo server's ask (an input request upstream, on
// 2026-07-28), reach the TypeScript SDK client that made the call, on the per-server and
// aggregated routes; a TypeScript client without the capabilities is never asked: the
// server is told decline.
func TestTypeScriptClientAnswersServerRequests(t *testing.T) {
	suite.File(t, "@modelcontextprotocol/sdk/package.json")
	base := gatewayURL(t)
	answers := map[string]any{
		"elicit": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada from ts", "age": 36}},
		"sample": map[string]any{"model": "ts-model", "role": "assistant", "content": map[string]any{"type": "text", "text": "sampled by ts"}},
	}
	ev := tsAnswering(t, base+"/mcp/servers/everything", answers,
		op("tools/call", map[string]any{"name": "trigger-elicitation-request", "arguments": map[string]any{}}),
		op("tools/call", map[string]any{"name": "trigger-sampling-request", "arguments": map[string]any{"prompt": "hi", "maxTokens": 5}}),
	)
	contains(t, "everything's elicitation", ev.Results[0], `Name: Ada from ts`)
	contains(t, "everything's sampling", ev.Results[1], `sampled by ts`, `ts-model`)
	if len(ev.Requests) != 2 {
		t.Fatalf("the client answered %d server requests, want 2", len(ev.Requests))
	}
	contains(t, "the elicitation as sent", ev.Requests[0], `"elicitation/create"`, `Your full, legal name`)
	contains(t, "the sampling request as sent", ev.Requests[1], `"sampling/createMessage"`, `context: hi`)

	agg := tsAnswering(t, base+"/mcp", answers,
		op("tools/call", map[string]any{"name": "mcp__demo__ask", "arguments": map[string]any{}}),
		op("tools/call", map[string]any{"name": "mcp__everything__trigger-elicitation-request", "arguments": map[string]any{}}),
	)
	contains(t, "demo ask", agg.Results[0], `accept: age=36`, `name=Ada from ts`)
	contains(t, "aggregated everything", agg.Results[1], `Name: Ada from ts`)

	none := ts(t, base+"/mcp", op("tools/call", map[string]any{"name": "mcp__demo__ask", "arguments": map[string]any{}}))
	contains(t, "ask without the capability", none.Results[0], `"text":"decline"`)
	if len(none.Requests) != 0 {
		t.Fatalf("a client without the capability was asked: %s", none.Requests)
	}
}

// TestTypeScriptClientSearch: the search route with the TypeScript SDK client: tool_search
// adds the found tool to the session's list (tools/list_changed) with its schema, and the
// client calls it directly and through call_tool.
func TestTypeScriptClientSearch(t *testing.T) {
	suite.File(t, "@modelcontextprotocol/sdk/package.json")
	base := gatewayURL(t)
	out := ts(t, base+gateway.PathSearch,
		op("tools/list", map[string]any{}),
		op("tools/call", map[string]any{"name": "tool_search", "arguments": map[string]any{"query": "echo a message back", "server": "everything", "limit": 1}}),
		op("wait/tools-changed", map[string]any{}),
		op("tools/list", map[string]any{}),
		op("tools/call", map[string]any{"name": "mcp__everything__echo", "arguments": map[string]any{"message": "found and called"}}),
		op("tools/call", map[string]any{"name": gateway.CallToolName, "arguments": map[string]any{"name": "mcp__demo__add", "arguments": map[string]any{"a": 2, "b": 40}}}),
	)
	contains(t, "first tools/list", out.Results[0], `"tool_search"`, `"call_tool"`)
	if strings.Contains(string(out.Results[0]), "mcp__everything__echo") {
		t.Errorf("the first list shows a tool before any search: %.400s", out.Results[0])
	}
	contains(t, "tool_search", out.Results[1], `mcp__everything__echo`)
	contains(t, "tools/list_changed", out.Results[2], `"toolsChanged"`)
	contains(t, "tools/list after the search", out.Results[3], `"mcp__everything__echo"`, `"message"`)
	contains(t, "the found tool", out.Results[4], `found and called`)
	contains(t, "call_tool", out.Results[5], `42`)
}

// TestTypeScriptClientTasks (issue 38): server-everything's task tools through the gateway,
// with the TypeScript SDK client downstream. The gateway's upstream client calls
// simulate-research-query as the task it requires, and the server's clarifying question,
// related to the task, reaches the session that made the call; the async triggers make the
// upstream client run the server's sampling and elicitation requests as tasks, which the
// calling session answers.
func TestTypeScriptClientTasks(t *testing.T) {
	suite.File(t, "@modelcontextprotocol/sdk/package.json")
	base := gatewayURL(t)
	answers := map[string]any{
		"elicit": map[string]any{"action": "accept", "content": map[string]any{"interpretation": "snake", "name": "Ada from ts", "favoriteColor": "Green", "agreeToTerms": true}},
		"sample": map[string]any{"model": "ts-model", "role": "assistant", "content": map[string]any{"type": "text", "text": "sampled by ts"}},
	}
	out := tsAnswering(t, base+"/mcp/servers/everything", answers,
		op("tools/call", map[string]any{"name": "simulate-research-query", "arguments": map[string]any{"topic": "python", "ambiguous": true}}),
		op("tools/call", map[string]any{"name": "trigger-sampling-request-async", "arguments": map[string]any{"prompt": "hi", "maxTokens": 5}}),
		op("tools/call", map[string]any{"name": "trigger-elicitation-request-async", "arguments": map[string]any{}}),
	)
	contains(t, "the research task", out.Results[0], `# Research Report: python (snake)`, `**Clarification**: snake`)
	contains(t, "async sampling", out.Results[1], `[COMPLETED] Async sampling completed!`, `sampled by ts`, `Task created: harness-`)
	contains(t, "async elicitation", out.Results[2], `[COMPLETED] User provided the requested information!`, `Name: Ada from ts`, `Favorite Color: Green`)
	if len(out.Requests) != 3 {
		t.Fatalf("the client answered %d server requests, want 3: %s", len(out.Requests), out.Requests)
	}
	contains(t, "the clarifying question", out.Requests[0], `"elicitation/create"`, `could have multiple interpretations`)
	contains(t, "the async sampling request", out.Requests[1], `"sampling/createMessage"`, `context: hi`)
	contains(t, "the async elicitation", out.Requests[2], `"elicitation/create"`, `async task demo`)
}

// TestTypeScriptClientCallsTasks: the TypeScript SDK client calls server-everything's task
// tool as a task itself, through the aggregated and the per-server route: it learns from the
// gateway's capabilities and tools/list that it may (execution.taskSupport), gets the task
// at once, polls it through input_required, answers the clarifying question (which carries
// the task as its related task), and reads the report with tasks/result; a task it cancels
// is cancelled, and the gateway cancels the upstream's task.
func TestTypeScriptClientCallsTasks(t *testing.T) {
	suite.File(t, "@modelcontextprotocol/sdk/package.json")
	base, logs := gatewayURLLogged(t)
	answers := map[string]any{
		"elicit": map[string]any{"action": "accept", "content": map[string]any{"interpretation": "snake"}},
	}
	for _, tc := range []struct{ route, tool string }{
		{"/mcp/servers/everything", "simulate-research-query"},
		{"/mcp", "mcp__everything__simulate-research-query"},
	} {
		t.Run(strings.TrimPrefix(tc.route, "/"), func(t *testing.T) {
			out := tsAnswering(t, base+tc.route, answers,
				op("tools/list", map[string]any{}),
				op("tasks/call", map[string]any{"name": tc.tool, "arguments": map[string]any{"topic": "python", "ambiguous": true}}),
				op("tasks/call-cancel", map[string]any{"name": tc.tool, "arguments": map[string]any{"topic": "go"}}),
				op("tasks/list", map[string]any{}),
			)
			var listed struct {
				Tools []struct {
					Name      string         `json:"name"`
					Execution map[string]any `json:"execution"`
					Meta      map[string]any `json:"_meta"`
				} `json:"tools"`
			}
			if err := json.Unmarshal(out.Results[0], &listed); err != nil {
				t.Fatal(err)
			}
			for _, tool := range listed.Tools {
				if _, ok := tool.Meta["harness.cordisgo.dev/execution"]; ok {
					t.Errorf("tool %s lists the harness's own _meta: %v", tool.Name, tool.Meta)
				}
				if tool.Name == tc.tool && tool.Execution["taskSupport"] != "optional" {
					t.Errorf("tool %s lists execution %v, want taskSupport optional", tool.Name, tool.Execution)
				}
			}
			var call struct {
				Created  struct{ TaskID, Status string } `json:"created"`
				Statuses [][2]string                     `json:"statuses"`
				Result   json.RawMessage                 `json:"result"`
				Error    string                          `json:"error"`
			}
			if err := json.Unmarshal(out.Results[1], &call); err != nil {
				t.Fatal(err)
			}
			if call.Created.TaskID == "" || call.Error != "" {
				t.Fatalf("the task call: %s", out.Results[1])
			}
			// The client reads the result when it sees input_required (tasks/result
			// waits for the end), as the specification's flow has it.
			if n := len(call.Statuses); n == 0 || call.Statuses[n-1][0] != "input_required" {
				t.Errorf("the statuses polled end with %v, want input_required", call.Statuses)
			}
			contains(t, "the task's result", call.Result, `# Research Report: python (snake)`, `**Clarification**: snake`,
				`"io.modelcontextprotocol/related-task":{"taskId":"`+call.Created.TaskID+`"}`)
			if len(out.Requests) != 1 {
				t.Fatalf("the client answered %d server requests, want 1: %s", len(out.Requests), out.Requests)
			}
			contains(t, "the clarifying question", out.Requests[0], `"elicitation/create"`, `could have multiple interpretations`,
				`"io.modelcontextprotocol/related-task":{"taskId":"`+call.Created.TaskID+`"}`)

			var cancelled struct {
				Created   struct{ TaskID string }         `json:"created"`
				Cancelled struct{ TaskID, Status string } `json:"cancelled"`
				After     struct{ Status string }         `json:"after"`
			}
			if err := json.Unmarshal(out.Results[2], &cancelled); err != nil {
				t.Fatal(err)
			}
			if cancelled.Cancelled.Status != "cancelled" || cancelled.After.Status != "cancelled" {
				t.Errorf("the cancelled task: %s", out.Results[2])
			}
			contains(t, "tasks/list", out.Results[3], call.Created.TaskID, cancelled.Created.TaskID)
			logs.await(t, "task cancelled: its caller went away")
		})
	}
	// A plain call of the tool still works: the gateway runs the upstream's task for it. A
	// task asked of a tool listed without task support is refused as the specification says
	// (-32601), and no task is made.
	out := tsAnswering(t, base+"/mcp/servers/everything", answers,
		op("tools/call", map[string]any{"name": "simulate-research-query", "arguments": map[string]any{"topic": "python", "ambiguous": true}}),
		op("tools/list", map[string]any{}),
		op("tasks/call-forced", map[string]any{"name": "echo", "arguments": map[string]any{"message": "hi"}}),
		op("tasks/list", map[string]any{}))
	contains(t, "the plain call", out.Results[0], `# Research Report: python (snake)`)
	contains(t, "the forced task", out.Results[2], `MCP error -32601: method not found`)
	if strings.Contains(string(out.Results[2]), `"created"`) || strings.Contains(string(out.Results[3]), "taskId") {
		t.Errorf("a task was made for a tool without task support: %s %s", out.Results[2], out.Results[3])
	}
}
