package mcpclient

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/testkit/mcptest"
)

// TestMain serves the stdio test server when the binary is started as one (mcptest.Stdio).
func TestMain(m *testing.M) { mcptest.Main(m) }

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// callText calls tool and returns its text content.
func callText(t *testing.T, cs *mcp.ClientSession, tool string, args any) string {
	t.Helper()
	cx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(cx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	if res.IsError {
		t.Fatalf("call %s: tool error %+v", tool, res.Content)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// closeConn closes c and fails the test on error.
func closeConn(t *testing.T, c *connection) {
	t.Helper()
	cx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Close(cx); err != nil {
		t.Fatalf("close: %v", err)
	}
}
