package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// testServerEnv makes the test binary act as a stdio MCP server instead of
// running tests: its value is the server mode (see runTestServer).
const testServerEnv = "HARNESS_MCPCLIENT_TEST_SERVER"

// readyFIFOEnv names a FIFO the test server writes its pid to once it
// runs, so a test can act on a started server without sleeping.
const readyFIFOEnv = "HARNESS_MCPCLIENT_TEST_READY_FIFO"

func TestMain(m *testing.M) {
	if mode := os.Getenv(testServerEnv); mode != "" {
		os.Exit(runTestServer(mode))
	}
	goleak.VerifyTestMain(m)
}

// runTestServer serves MCP over stdin/stdout. Every mode first writes
// "test-server <mode> pid=<pid>" to stderr (and its pid to the FIFO named
// by readyFIFOEnv, if set). Modes:
//
//	normal            tools echo, add, getenv, crash (exits 7) and the
//	                  supervision tools (see addSupervisionTools);
//	                  exits when stdin closes
//	stderr-chatty     writes 1000 numbered lines to stderr, then normal
//	exit-immediately  writes a fatal message to stderr and exits 3
//	never-initialize  never answers, ignores stdin EOF and SIGTERM
//	stubborn          serves normally, then ignores stdin EOF and SIGTERM
func runTestServer(mode string) int {
	fmt.Fprintf(os.Stderr, "test-server %s pid=%d\n", mode, os.Getpid())
	if fifo := os.Getenv(readyFIFOEnv); fifo != "" {
		// Tell the test we are running; blocks until it reads.
		if err := os.WriteFile(fifo, []byte(fmt.Sprint(os.Getpid())), 0); err != nil {
			fmt.Fprintln(os.Stderr, "test-server:", err)
			return 2
		}
	}
	serve := func() int {
		s := newTestServer()
		addSupervisionTools(s)
		mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "exits the server process"},
			func(context.Context, *mcp.CallToolRequest, echoIn) (*mcp.CallToolResult, any, error) {
				fmt.Fprintln(os.Stderr, "panic: crash requested (marker-c4a5)")
				os.Exit(7)
				return nil, nil, nil
			})
		if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "test-server:", err)
		}
		return 0
	}
	switch mode {
	case "normal":
		return serve()
	case "stderr-chatty":
		for i := range 1000 {
			fmt.Fprintf(os.Stderr, "chatty line %04d\n", i)
		}
		return serve()
	case "exit-immediately":
		fmt.Fprintln(os.Stderr, "fatal: FAKE_API_KEY is not set (marker-7f3a)")
		return 3
	case "never-initialize":
		signal.Ignore(syscall.SIGTERM)
		_, _ = io.Copy(io.Discard, os.Stdin)
		time.Sleep(time.Hour) // the client must kill us
		return 0
	case "stubborn":
		signal.Ignore(syscall.SIGTERM)
		serve()
		time.Sleep(time.Hour) // the client must escalate to SIGKILL
		return 0
	default:
		fmt.Fprintf(os.Stderr, "unknown mode %q\n", mode)
		return 2
	}
}

type echoIn struct {
	Text string `json:"text"`
}

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type getenvIn struct {
	Name string `json:"name"`
}

// newTestServer is the server every test talks to, in memory, over HTTP
// or over stdio.
func newTestServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "test-server", Version: "1.2.3"},
		&mcp.ServerOptions{Instructions: "Use echo to repeat text."})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echoes text"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return textResult(in.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "adds two integers"},
		func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, any, error) {
			return textResult(fmt.Sprint(in.A + in.B)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "getenv", Description: `returns "set:<value>" or "unset"`},
		func(_ context.Context, _ *mcp.CallToolRequest, in getenvIn) (*mcp.CallToolResult, any, error) {
			if v, ok := os.LookupEnv(in.Name); ok {
				return textResult("set:" + v), nil, nil
			}
			return textResult("unset"), nil, nil
		})
	return s
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// callText calls tool and returns its text content.
func callText(t *testing.T, cs *mcp.ClientSession, tool string, args any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
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
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
}

// serverStats counts what a test server saw, for tests that must prove
// behaviour on the server side.
type serverStats struct {
	Lists     int64 `json:"lists"`     // tools/list requests received
	Cancelled int64 `json:"cancelled"` // notifications/cancelled received
	Aborted   int64 `json:"aborted"`   // block calls whose context ended
}

// addSupervisionTools adds tools that let a test observe the server:
//
//	stats    returns serverStats as JSON text
//	block    waits until its request is cancelled (or release is called),
//	         then counts it
//	storm    makes the server send n (default 1000) tools/list_changed
//	         notifications in a burst
func addSupervisionTools(s *mcp.Server) (release func()) {
	var lists, cancelled, aborted, storm atomic.Int64
	stop := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(stop) }) }
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(c context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/list":
				lists.Add(1)
			case "notifications/cancelled":
				cancelled.Add(1)
			}
			return next(c, method, req)
		}
	})
	// The SDK debounces list_changed; this multiplies the one notification it
	// sends into a storm.
	s.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(c context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/tools/list_changed" {
				for n := storm.Swap(0); n > 1; n-- {
					if _, err := next(c, method, req); err != nil {
						return nil, err
					}
				}
			}
			return next(c, method, req)
		}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "stats", Description: "reports what the server saw"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			b, _ := json.Marshal(serverStats{Lists: lists.Load(), Cancelled: cancelled.Load(), Aborted: aborted.Load()})
			return textResult(string(b)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "block", Description: "never answers"},
		func(c context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			select {
			case <-c.Done():
				aborted.Add(1)
				return nil, nil, c.Err()
			case <-stop:
				return textResult("released"), nil, nil
			}
		})
	type stormIn struct {
		N int64 `json:"n,omitempty"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "storm", Description: "sends a burst of tools/list_changed"},
		func(_ context.Context, _ *mcp.CallToolRequest, in stormIn) (*mcp.CallToolResult, any, error) {
			n := in.N
			if n <= 0 {
				n = 1000
			}
			storm.Store(n)
			name := fmt.Sprintf("stormed_%d", time.Now().UnixNano())
			mcp.AddTool(s, &mcp.Tool{Name: name}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				return textResult(name), nil, nil
			})
			return textResult(name), nil, nil
		})
	return release
}
