// Package mcptest holds test-only helpers for packages that run MCP servers: one test
// server ([NewServer]: tools echo and whoami, instructions), served three ways — over stdio
// by re-executing the test binary ([Main], [Stdio]), in memory ([InMemory]), and over
// Streamable HTTP behind an httptest endpoint that can be restarted ([NewHTTP]). Status
// recording is [ctxtest.Record]'s job.
//
// Only tests may import this package (internal/archtest checks it).
//
// [ctxtest.Record]: https://pkg.go.dev/github.com/cordisgo/harness/ctx/ctxtest#Record
package mcptest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// Environment variables of a stdio test server.
const (
	// ModeEnv makes the test binary serve MCP over stdio instead of running tests; its
	// value is the [Mode].
	ModeEnv = "HARNESS_MCPTEST_SERVER"
	// LabelEnv is the label the server puts in its whoami answer.
	LabelEnv = "HARNESS_MCPTEST_LABEL"
	// TokenEnv is the variable a [Leaky] server prints to stderr.
	TokenEnv = "HARNESS_MCPTEST_TOKEN"
)

// Mode is what a stdio test server does.
type Mode string

// Stdio test server modes.
const (
	// Normal serves the test server until stdin closes.
	Normal Mode = "normal"
	// Leaky prints the value of [TokenEnv] to stderr ("debug: token is …"), then serves.
	Leaky Mode = "leaky"
	// Hang reads stdin and never answers; it exits when stdin closes.
	Hang Mode = "hang"
	// ExitWithArgs prints its arguments to stderr ("fatal: bad arguments …") and exits 3.
	ExitWithArgs Mode = "exit-with-args"
)

// Main is a TestMain: started as a stdio test server (see [Stdio]) the binary serves and
// exits; otherwise it runs the tests and fails on leaked goroutines.
func Main(m *testing.M) {
	if mode := os.Getenv(ModeEnv); mode != "" {
		os.Exit(serve(Mode(mode)))
	}
	goleak.VerifyTestMain(m)
}

// serve is the stdio test server.
func serve(mode Mode) int {
	fmt.Fprintf(os.Stderr, "test server %s pid=%d\n", mode, os.Getpid())
	switch mode {
	case Normal:
	case Leaky:
		fmt.Fprintf(os.Stderr, "debug: token is %s\n", os.Getenv(TokenEnv))
	case ExitWithArgs:
		fmt.Fprintf(os.Stderr, "fatal: bad arguments %q\n", os.Args[1:])
		return 3
	case Hang:
		_, _ = io.Copy(io.Discard, os.Stdin)
		return 0
	default:
		fmt.Fprintf(os.Stderr, "unknown mode %q\n", mode)
		return 2
	}
	if err := NewServer(os.Getenv(LabelEnv)).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "test server:", err)
	}
	return 0
}

// Stdio returns the command and environment that start the test binary as a stdio test
// server in mode, whose whoami answers label. The test binary's TestMain must be [Main].
func Stdio(t testing.TB, mode Mode, label string) (command string, env map[string]string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe, map[string]string{ModeEnv: string(mode), LabelEnv: label}
}

// Implementation is what the test server reports about itself.
var Implementation = mcp.Implementation{Name: "mcpm-test", Version: "0.0.7"}

// Instructions are the test server's instructions.
const Instructions = "Use echo to repeat text."

type echoArgs struct {
	Text string `json:"text"`
}

// NewServer returns the test server: echo repeats its text argument, whoami answers
// "<label> pid=<pid>" so that a test can tell instances (and processes) apart.
func NewServer(label string) *mcp.Server {
	impl := Implementation
	s := mcp.NewServer(&impl, &mcp.ServerOptions{Instructions: Instructions})
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

// Handler serves srv over Streamable HTTP, for tests that wrap it.
func Handler(srv *mcp.Server) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
}

// HTTP is a Streamable HTTP endpoint (an httptest server) whose server can be restarted:
// [HTTP.Restart] puts a new server behind a new handler that knows none of the old
// sessions, which is what a client sees when the server process restarts behind the same
// URL (404 for its session id). It is closed, its sessions first, when the test ends.
//
// An HTTP is safe for concurrent use.
type HTTP struct {
	srv     *httptest.Server
	newSrv  func() *mcp.Server
	handler atomic.Pointer[http.Handler]
	mu      sync.Mutex
	servers []*mcp.Server
}

// NewHTTP starts an endpoint serving newServer's servers (one per start). Nil serves
// [NewServer]("http").
func NewHTTP(t testing.TB, newServer func() *mcp.Server) *HTTP {
	if newServer == nil {
		newServer = func() *mcp.Server { return NewServer("http") }
	}
	h := &HTTP{newSrv: newServer}
	h.Restart()
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*h.handler.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		h.CloseSessions(-1)
		h.srv.Close()
	})
	return h
}

// URL is the endpoint's address.
func (h *HTTP) URL() string { return h.srv.URL }

// Restart puts a new server behind a new handler.
func (h *HTTP) Restart() {
	s := h.newSrv()
	h.mu.Lock()
	h.servers = append(h.servers, s)
	h.mu.Unlock()
	handler := Handler(s)
	h.handler.Store(&handler)
}

// server returns server i, or the current one when i < 0.
func (h *HTTP) server(i int) *mcp.Server {
	h.mu.Lock()
	defer h.mu.Unlock()
	if i < 0 {
		i = len(h.servers) - 1
	}
	return h.servers[i]
}

// Sessions returns how many sessions server i (-1: the current one) has.
func (h *HTTP) Sessions(i int) int {
	n := 0
	for range h.server(i).Sessions() {
		n++
	}
	return n
}

// CloseSessions closes the sessions of server i (-1: every server): what the death of
// the old process does to them.
func (h *HTTP) CloseSessions(i int) {
	h.mu.Lock()
	servers := h.servers
	if i >= 0 {
		servers = servers[i : i+1]
	}
	h.mu.Unlock()
	for _, s := range servers {
		for ss := range s.Sessions() {
			_ = ss.Close()
		}
	}
}
