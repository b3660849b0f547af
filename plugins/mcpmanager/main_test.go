package mcpmanager

import (
	"context"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// serverModeEnv makes the test binary serve MCP over stdio instead of running tests; its
// value is the mode (see runServer).
const serverModeEnv = "HARNESS_MCPMANAGER_TEST_SERVER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(serverModeEnv); mode != "" {
		os.Exit(runServer(mode))
	}
	goleak.VerifyTestMain(m)
}

// runServer is the test server. Modes:
//
//	normal  tools echo and whoami; instructions; exits when stdin closes
//	leaky   prints the value of MCPM_TOKEN to stderr, then serves like normal
//	hang    reads stdin and never answers; exits when stdin closes
//	exit-with-args  prints its arguments to stderr and exits 3
func runServer(mode string) int {
	fmt.Fprintf(os.Stderr, "test server %s pid=%d\n", mode, os.Getpid())
	switch mode {
	case "normal":
	case "leaky":
		fmt.Fprintf(os.Stderr, "debug: token is %s\n", os.Getenv("MCPM_TOKEN"))
	case "exit-with-args":
		fmt.Fprintf(os.Stderr, "fatal: bad arguments %q\n", os.Args[1:])
		return 3
	case "hang":
		_, _ = io.Copy(io.Discard, os.Stdin)
		return 0
	default:
		fmt.Fprintf(os.Stderr, "unknown mode %q\n", mode)
		return 2
	}
	s := newTestServer(os.Getenv("MCPM_LABEL"))
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "test server:", err)
	}
	return 0
}

type echoArgs struct {
	Text string `json:"text"`
}

// newTestServer is the server of every test, over stdio or HTTP. label ends up in the
// whoami answer, so a test can tell instances apart.
func newTestServer(label string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcpm-test", Version: "0.0.7"},
		&mcp.ServerOptions{Instructions: "Use echo to repeat text."})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echoes text"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "names the instance"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s pid=%d", label, os.Getpid())}}}, nil, nil
		})
	return s
}
