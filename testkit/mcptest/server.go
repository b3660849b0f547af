package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Implementation is what the test server reports about itself.
var Implementation = mcp.Implementation{Name: "mcpm-test", Version: "0.0.7"}

// Instructions are the test server's instructions.
const Instructions = "Use echo to repeat text."

// BigResultBytes is the size of the big tool's text.
const BigResultBytes = 10 << 20

// Stats is what a test server saw, as its stats tool reports it (JSON) and
// [Control.Stats] returns it.
type Stats struct {
	Lists     int64 `json:"lists"`     // tools/list requests received
	Cancelled int64 `json:"cancelled"` // notifications/cancelled received
	Aborted   int64 `json:"aborted"`   // block calls whose context ended
}

// Control observes and steers one test server from the test that built it.
//
// A Control is safe for concurrent use.
type Control struct {
	lists, cancelled, aborted atomic.Int64
	storm                     atomic.Int64 // copies of the next tools/list_changed
	stormed                   atomic.Int64 // tools added by storm so far
	stop                      chan struct{}
	once                      sync.Once
}

// Stats returns what the server saw so far.
func (c *Control) Stats() Stats {
	return Stats{Lists: c.lists.Load(), Cancelled: c.cancelled.Load(), Aborted: c.aborted.Load()}
}

// Release makes every block call, running or future, answer "released": an in-memory
// server's session waits for its handlers before it ends.
func (c *Control) Release() { c.once.Do(func() { close(c.stop) }) }

type echoArgs struct {
	Text string `json:"text"`
}

type addArgs struct {
	A int `json:"a"`
	B int `json:"b"`
}

type getenvArgs struct {
	Name string `json:"name"`
}

type stormArgs struct {
	N int64 `json:"n,omitempty"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// NewServer returns the test server; see [NewControlled] for its tools.
func NewServer(label string) *mcp.Server {
	s, _ := NewControlled(label)
	return s
}

// NewControlled returns the test server and its [Control]. Its tools:
//
//	echo    returns its text argument
//	whoami  answers "<label> pid=<pid>", so that a test can tell instances (and processes) apart
//	add     adds the integers a and b
//	getenv  answers "set:<value>" or "unset" for the server process's variable name
//	big     returns BigResultBytes of text
//	block   never answers until its request is cancelled (counted in Stats.Aborted) or
//	        [Control.Release] is called; reports the event "call"
//	stats   returns [Stats] as JSON text
//	storm   adds a tool stormed_<k> (answering its own name, which storm returns too) and
//	        announces it with n (default 1000) tools/list_changed in a burst; reports
//	        "stormed" once they went out
//
// It reports the events "list" and "cancelled" for every tools/list and
// notifications/cancelled it receives (see [Events]; only over stdio).
func NewControlled(label string) (*mcp.Server, *Control) {
	ctl := &Control{stop: make(chan struct{})}
	impl := Implementation
	s := mcp.NewServer(&impl, &mcp.ServerOptions{Instructions: Instructions})
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(cx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/list":
				ctl.lists.Add(1)
				emit("list")
			case "notifications/cancelled":
				ctl.cancelled.Add(1)
				emit("cancelled")
			}
			return next(cx, method, req)
		}
	})
	// The SDK debounces list_changed; this multiplies the one notification it sends after
	// storm into the burst.
	s.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(cx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "notifications/tools/list_changed" {
				return next(cx, method, req)
			}
			n := max(ctl.storm.Swap(0), 1)
			for range n {
				if res, err := next(cx, method, req); err != nil {
					return res, err
				}
			}
			if n > 1 {
				emit("stormed")
			}
			return nil, nil
		}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echoes text"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			return text(in.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "names the instance"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprintf("%s pid=%d", label, os.Getpid())), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "adds two integers"},
		func(_ context.Context, _ *mcp.CallToolRequest, in addArgs) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprint(in.A + in.B)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "getenv", Description: `returns "set:<value>" or "unset"`},
		func(_ context.Context, _ *mcp.CallToolRequest, in getenvArgs) (*mcp.CallToolResult, any, error) {
			if v, ok := os.LookupEnv(in.Name); ok {
				return text("set:" + v), nil, nil
			}
			return text("unset"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "returns 10 MiB of text"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return text(strings.Repeat("0123456789abcde\n", BigResultBytes/16)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "block", Description: "never answers; ends when cancelled"},
		func(cx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			emit("call")
			select {
			case <-cx.Done():
				ctl.aborted.Add(1)
				return nil, nil, cx.Err()
			case <-ctl.stop:
				return text("released"), nil, nil
			}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "stats", Description: "reports what the server saw"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			b, err := json.Marshal(ctl.Stats())
			return text(string(b)), nil, err
		})
	mcp.AddTool(s, &mcp.Tool{Name: "storm", Description: "adds a tool and announces it with a burst of tools/list_changed"},
		func(_ context.Context, _ *mcp.CallToolRequest, in stormArgs) (*mcp.CallToolResult, any, error) {
			n := in.N
			if n <= 0 {
				n = 1000
			}
			ctl.storm.Store(n)
			name := fmt.Sprintf("stormed_%d", ctl.stormed.Add(1))
			mcp.AddTool(s, &mcp.Tool{Name: name, Description: "added by storm"},
				func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
					return text(name), nil, nil
				})
			return text(name), nil, nil
		})
	return s, ctl
}

// InMemory runs srv on one end of an in-memory transport pair and returns the other end
// for a client. The server's session ends when the test does.
func InMemory(t testing.TB, srv *mcp.Server) mcp.Transport {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatalf("mcptest: in-memory server: %v", err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	return ct
}
