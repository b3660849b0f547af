package mcpclient

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
			if !sameJSON(t, out, []byte(want)) {
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

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}
