package mcptest

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

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
	// EventsEnv names the Unix socket a server reports its events to (see [Events]).
	EventsEnv = "HARNESS_MCPTEST_EVENTS"
)

// Markers in what stdio test servers write to stderr, for tests that look for them in a
// stderr tail.
const (
	// ExitMarker ends the fatal message of an [ExitWithArgs] server.
	ExitMarker = "marker-7f3a"
	// CrashMarker is in the panic message of a server whose crash tool was called (it
	// exits 7).
	CrashMarker = "marker-c4a5"
	// CrashLoopMarker is in the panic message of a [CrashLoop] server (it exits 4).
	CrashLoopMarker = "marker-crash-4"
)

// StdioTools are the names of a stdio test server's tools, sorted: [NewControlled]'s and
// crash.
var StdioTools = []string{"add", "big", "block", "crash", "echo", "getenv", "stats", "storm", "whoami"}

// Mode is what a stdio test server does. Every mode first writes
// "test-server <mode> pid=<pid>" to stderr, then reports the event "start".
type Mode string

// Stdio test server modes.
const (
	// Normal serves the test server, with the tool crash besides (it exits 7), until stdin
	// closes.
	Normal Mode = "normal"
	// Leaky prints the value of [TokenEnv] to stderr ("debug: token is …"), then serves.
	Leaky Mode = "leaky"
	// Chatty writes 1000 numbered lines to stderr ("chatty line 0000" …), then serves.
	Chatty Mode = "stderr-chatty"
	// Garbage writes lines that are not JSON-RPC to stdout, then serves.
	Garbage Mode = "garbage"
	// CrashLoop serves, then exits 4 shortly after its first tools/list.
	CrashLoop Mode = "crashloop"
	// Hang serves but never answers the handshake (initialize or server/discover),
	// reporting the event "initialize"; it exits when stdin closes.
	Hang Mode = "hang"
	// NeverInitialize never answers and ignores both stdin EOF and SIGTERM: the client
	// must kill it.
	NeverInitialize Mode = "never-initialize"
	// Stubborn serves, then ignores stdin EOF and SIGTERM: the client must escalate to
	// SIGKILL.
	Stubborn Mode = "stubborn"
	// ExitWithArgs prints "fatal: FAKE_API_KEY is not set, bad arguments […] ([ExitMarker])"
	// to stderr and exits 3.
	ExitWithArgs Mode = "exit-with-args"
)

// Main is a TestMain: started as a stdio test server (see [Stdio]) the binary serves and
// exits; otherwise it runs the tests and fails on leaked goroutines. A package whose
// binary has other roles calls [Serve] from its own TestMain instead.
func Main(m *testing.M) {
	Serve()
	goleak.VerifyTestMain(m)
}

// Serve makes the process a stdio test server, and exits, when it was started as one
// (see [Stdio]); otherwise it returns at once.
func Serve() {
	if mode := os.Getenv(ModeEnv); mode != "" {
		os.Exit(serve(Mode(mode)))
	}
}

// serve is the stdio test server.
func serve(mode Mode) int {
	fmt.Fprintf(os.Stderr, "test-server %s pid=%d\n", mode, os.Getpid())
	emit("start") // after the line above: a test that saw the start finds the pid in stderr
	s, _ := NewControlled(os.Getenv(LabelEnv))
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "exits the server process"},
		func(context.Context, *mcp.CallToolRequest, echoArgs) (*mcp.CallToolResult, any, error) {
			fmt.Fprintf(os.Stderr, "panic: crash requested (%s)\n", CrashMarker)
			os.Exit(7)
			return nil, nil, nil
		})
	switch mode {
	case Normal:
	case Leaky:
		fmt.Fprintf(os.Stderr, "debug: token is %s\n", os.Getenv(TokenEnv))
	case Chatty:
		for i := range 1000 {
			fmt.Fprintf(os.Stderr, "chatty line %04d\n", i)
		}
	case Garbage:
		fmt.Fprintln(os.Stdout, "Starting server... (this line is not JSON-RPC)")
		fmt.Fprintln(os.Stdout, "{garbage")
	case CrashLoop:
		var once atomic.Bool
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(cx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "tools/list" && once.CompareAndSwap(false, true) {
					time.AfterFunc(100*time.Millisecond, func() {
						fmt.Fprintf(os.Stderr, "panic: crash loop (%s)\n", CrashLoopMarker)
						os.Exit(4)
					})
				}
				return next(cx, method, req)
			}
		})
	case Hang:
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(cx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "initialize" || method == "server/discover" {
					// The handshake (initialize, or discovery for 2026-07-28 clients)
					// is never answered; the request ends with the connection.
					emit("initialize")
					<-cx.Done()
					return nil, cx.Err()
				}
				return next(cx, method, req)
			}
		})
	case NeverInitialize:
		signal.Ignore(syscall.SIGTERM)
		_, _ = io.Copy(io.Discard, os.Stdin)
		select {} // the client must kill us
	case Stubborn:
		signal.Ignore(syscall.SIGTERM)
		run(s)
		select {} // the client must escalate to SIGKILL
	case ExitWithArgs:
		fmt.Fprintf(os.Stderr, "fatal: FAKE_API_KEY is not set, bad arguments %q (%s)\n", os.Args[1:], ExitMarker)
		return 3
	default:
		fmt.Fprintf(os.Stderr, "unknown mode %q\n", mode)
		return 2
	}
	run(s)
	return 0
}

func run(s *mcp.Server) {
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "test-server:", err)
	}
}

// emit reports "kind pid" to the socket named by [EventsEnv], if there is one. It waits
// for the test to have read it, so events arrive in the order they happened.
func emit(kind string) {
	path := os.Getenv(EventsEnv)
	if path == "" || os.Getenv(ModeEnv) == "" {
		return // not a stdio test server: in process, nothing to report to
	}
	c, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		fmt.Fprintln(os.Stderr, "test-server: events:", err)
		return
	}
	defer func() { _ = c.Close() }()
	fmt.Fprintf(c, "%s %d\n", kind, os.Getpid())
}

// Stdio returns the command and environment that start the test binary as a stdio test
// server in mode, whose whoami answers label. The test binary's TestMain must be [Main]
// (or call [Serve]). The environment also keeps a -race binary from sleeping at exit.
func Stdio(t testing.TB, mode Mode, label string) (command string, env map[string]string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe, map[string]string{ModeEnv: string(mode), LabelEnv: label, "GORACE": "atexit_sleep_ms=0"}
}
