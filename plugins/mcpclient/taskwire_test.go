package mcpclient

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/testkit/mcptest"
)

// The shim moves what the SDK's types would drop into _meta, and leaves every other message
// as it came (the same bytes).
func TestShimMessages(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"a created task", `{"jsonrpc":"2.0","id":3,"result":{"task":{"taskId":"t1","status":"working","createdAt":"x","lastUpdatedAt":"x","ttl":60000,"pollInterval":1000}}}`,
			`{"jsonrpc":"2.0","id":3,"result":{"_meta":{"harness.cordisgo.dev/createdTask":{"createdAt":"x","lastUpdatedAt":"x","pollInterval":1000,"status":"working","taskId":"t1","ttl":60000}},"task":{"createdAt":"x","lastUpdatedAt":"x","pollInterval":1000,"status":"working","taskId":"t1","ttl":60000}}}`},
		{"the server's tasks capability", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"list":{},"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"s","version":"1"}}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"_meta":{"harness.cordisgo.dev/serverTasks":{"list":{},"requests":{"tools":{"call":{}}}}},"capabilities":{"tasks":{"list":{},"requests":{"tools":{"call":{}}}}},"protocolVersion":"2025-11-25","serverInfo":{"name":"s","version":"1"}}}`},
		{"a tool's execution", `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"},"_meta":{"x":1}},{"name":"b","inputSchema":{"type":"object"}}]}}`,
			`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"_meta":{"harness.cordisgo.dev/execution":{"taskSupport":"required"},"x":1},"execution":{"taskSupport":"required"},"inputSchema":{"type":"object"},"name":"a"},{"inputSchema":{"type":"object"},"name":"b"}]}}`},
		{"a sampling request as a task", `{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{"task":{"ttl":300000},"messages":[],"maxTokens":5}}`,
			`{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{"_meta":{"harness.cordisgo.dev/task":{"ttl":300000}},"maxTokens":5,"messages":[]}}`},
		{"tasks/get, tunneled", `{"jsonrpc":"2.0","id":8,"method":"tasks/get","params":{"taskId":"t1"}}`,
			`{"jsonrpc":"2.0","id":8,"method":"ping","params":{"_meta":{"harness.cordisgo.dev/tunnel":{"method":"tasks/get","params":{"taskId":"t1"}}}}}`},
		{"a plain result", `{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"the tasks are done"}]}}`, ``},
		{"a plain elicitation", `{"jsonrpc":"2.0","id":9,"method":"elicitation/create","params":{"message":"task?","requestedSchema":{"type":"object","properties":{}}}}`, ``},
		{"a tasks notification", `{"jsonrpc":"2.0","method":"tasks/get","params":{"taskId":"t1"}}`, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := shimBytes([]byte(tc.in))
			want := tc.want
			if want == "" {
				want = tc.in
			}
			if !mcptest.SameJSON(t, out, []byte(want)) {
				t.Errorf("got\n%s\nwant\n%s", out, want)
			}
			msg, err := jsonrpc.DecodeMessage([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if changed := shimMessage(msg); changed != (tc.want != "") {
				t.Errorf("shimMessage reported a change: %v", changed)
			}
		})
	}
}

// A served tools/call's task moves into _meta; other requests keep their bytes.
func TestShimTaskRequest(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"a call as a task", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"r","arguments":{"topic":"go"},"task":{"ttl":60000},"_meta":{"progressToken":1}}}`,
			`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"_meta":{"harness.cordisgo.dev/task":{"ttl":60000},"progressToken":1},"arguments":{"topic":"go"},"name":"r"}}`},
		{"a plain call with a task argument", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"r","arguments":{"task":"x"}}}`, ``},
		{"tasks/get", `{"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"taskId":"t"}}`, ``},
		{"not JSON", `{"task": tools/call`, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(tc.in))
			ShimTaskRequest(req)
			out, err := io.ReadAll(req.Body)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if string(out) != tc.in {
					t.Errorf("got %s, want it unchanged", out)
				}
				return
			}
			if !mcptest.SameJSON(t, out, []byte(tc.want)) || req.ContentLength != int64(len(out)) {
				t.Errorf("got\n%s (length %d)\nwant\n%s", out, req.ContentLength, tc.want)
			}
		})
	}
}

// A listed tool's execution: "optional" for a session with tasks, and the harness's _meta
// gone either way.
func TestListedExecution(t *testing.T) {
	tool := &mcp.Tool{Name: "r", InputSchema: map[string]any{"type": "object"}}
	MarkTaskSupport(tool, "required")
	plain := &mcp.Tool{Name: "p", InputSchema: map[string]any{"type": "object"}, Meta: mcp.Meta{"x": 1}}
	MarkTaskSupport(plain, "forbidden")
	for _, tasks := range []bool{true, false} {
		res, err := listedExecution(&mcp.ListToolsResult{Tools: []*mcp.Tool{tool, plain}}, tasks)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(res)
		want := `{"cacheScope":"","ttlMs":0,"tools":[{"execution":{"taskSupport":"optional"},"inputSchema":{"type":"object"},"name":"r"},{"_meta":{"x":1},"inputSchema":{"type":"object"},"name":"p"}]}`
		if !tasks {
			want = `{"cacheScope":"","ttlMs":0,"tools":[{"inputSchema":{"type":"object"},"name":"r"},{"_meta":{"x":1},"inputSchema":{"type":"object"},"name":"p"}]}`
		}
		if !mcptest.SameJSON(t, got, []byte(want)) {
			t.Errorf("tasks %v: got\n%s\nwant\n%s", tasks, got, want)
		}
	}
}
