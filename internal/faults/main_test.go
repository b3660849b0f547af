//go:build faults

package faults

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/cordisgo/harness/cmd/harness/app"
)

// Environment of the re-executed test binary.
const (
	// serverEnv makes the test binary a fault server; its value is the mode (see runServer).
	serverEnv = "HARNESS_FAULTS_SERVER"
	// eventsEnv names the Unix socket a fault server reports what it sees to (see events).
	eventsEnv = "HARNESS_FAULTS_EVENTS"
	// harnessEnv=1 makes the test binary the harness binary.
	harnessEnv = "HARNESS_FAULTS_HARNESS"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(serverEnv); mode != "" {
		os.Exit(runServer(mode))
	}
	if os.Getenv(harnessEnv) == "1" {
		os.Exit(app.Main(harnessOptions()))
	}
	warmUp()
	goleak.VerifyTestMain(m)
}

// harnessOptions make every server row that runs this binary a harness too (the demo
// server is the harness's demo-server command).
func harnessOptions() app.Options {
	return app.Options{SelfEnv: map[string]string{harnessEnv: "1"}}
}

// warmUp makes the runtime create the descriptors it keeps for the process's life (the
// network poller), so that the first test's descriptor count is not off by them.
func warmUp() {
	if ln, err := net.Listen("tcp", "127.0.0.1:0"); err == nil {
		ln.Close()
	}
	if r, w, err := os.Pipe(); err == nil {
		r.Close()
		w.Close()
	}
}

// emit reports "kind pid" to the test's event socket, if there is one. It waits for the
// test to have read it, so events arrive in the order they happened.
func emit(kind string) {
	path := os.Getenv(eventsEnv)
	if path == "" {
		return
	}
	c, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fault server: events:", err)
		return
	}
	defer c.Close()
	fmt.Fprintf(c, "%s %d\n", kind, os.Getpid())
}

// bigResultBytes is the size of the big tool's text.
const bigResultBytes = 10 << 20

// runServer is a fault server over stdio. Every mode first reports "start". Modes:
//
//	echo       tools echo, hang (never answers until cancelled), big (a 10 MiB text), storm
//	           (a burst of tools/list_changed); reports every tools/list ("list") and
//	           notifications/cancelled ("cancelled"); exits when stdin closes
//	noinit     never answers initialize
//	garbage    writes lines that are not JSON-RPC to stdout, then serves like echo
//	exit       writes a fatal message to stderr and exits 3 at once
//	crashloop  serves like echo, then exits 4 shortly after its first tools/list
func runServer(mode string) int {
	emit("start")
	fmt.Fprintf(os.Stderr, "fault server %s pid=%d\n", mode, os.Getpid())
	s := newFaultServer()
	switch mode {
	case "echo":
	case "noinit":
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(c context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "initialize" {
					emit("initialize")
					<-c.Done() // never answered; ends when the connection does
					return nil, c.Err()
				}
				return next(c, method, req)
			}
		})
	case "garbage":
		fmt.Fprintln(os.Stdout, "Starting server... (this line is not JSON-RPC)")
		fmt.Fprintln(os.Stdout, "{garbage")
	case "exit":
		fmt.Fprintln(os.Stderr, "fatal: cannot start: FAULTS_TOKEN missing (marker-exit-3)")
		return 3
	case "crashloop":
		var once atomic.Bool
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(c context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "tools/list" && once.CompareAndSwap(false, true) {
					time.AfterFunc(100*time.Millisecond, func() {
						fmt.Fprintln(os.Stderr, "panic: crash loop (marker-crash-4)")
						os.Exit(4)
					})
				}
				return next(c, method, req)
			}
		})
	default:
		fmt.Fprintf(os.Stderr, "unknown mode %q\n", mode)
		return 2
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "fault server:", err)
	}
	return 0
}

type textArgs struct {
	Text string `json:"text"`
}

type stormArgs struct {
	N int64 `json:"n"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// newFaultServer is the echo server every mode builds on (also served over HTTP in
// process, where emit reports nothing).
func newFaultServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "fault-server", Version: "1.0.0"}, nil)
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(c context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/list":
				emit("list")
			case "notifications/cancelled":
				emit("cancelled")
			}
			return next(c, method, req)
		}
	})
	// storm arms a burst: the next tools/list_changed the SDK sends goes out that many
	// times.
	var storm atomic.Int64
	s.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(c context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "notifications/tools/list_changed" {
				return next(c, method, req)
			}
			n := max(storm.Swap(0), 1)
			for range n {
				if res, err := next(c, method, req); err != nil {
					return res, err
				}
			}
			if n > 1 {
				emit("stormed")
			}
			return nil, nil
		}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "returns its text"},
		func(_ context.Context, _ *mcp.CallToolRequest, in textArgs) (*mcp.CallToolResult, any, error) {
			return text(in.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "hang", Description: "never answers; ends only when cancelled"},
		func(c context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			emit("call")
			<-c.Done()
			return nil, nil, c.Err()
		})
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "returns 10 MiB of text"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return text(strings.Repeat("0123456789abcde\n", bigResultBytes/16)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "storm", Description: "adds the tool stormed and announces it with n tools/list_changed"},
		func(_ context.Context, _ *mcp.CallToolRequest, in stormArgs) (*mcp.CallToolResult, any, error) {
			storm.Store(in.N)
			mcp.AddTool(s, &mcp.Tool{Name: "stormed", Description: "added by storm"},
				func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
					return text("stormed"), nil, nil
				})
			return text("armed"), nil, nil
		})
	return s
}
