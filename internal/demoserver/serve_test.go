package demoserver

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/internal/mcpserve/mcpservetest"
)

func TestServeStdioSubprocess(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("no test executable: %v", err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	// A race-enabled child would otherwise sleep a second before exiting.
	cmd.Env = append(os.Environ(), childEnv+"=1", "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	cmd.Stderr = os.Stderr
	cs, err := newClient(nil).Connect(testContext(t), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v", exe, err)
	}
	if got := cs.InitializeResult().ServerInfo.Name; got != "stdio-child" {
		t.Errorf("server name = %q", got)
	}
	if got := text(t, callTool(t, cs, "echo", map[string]any{"text": "over stdio"})); got != "over stdio" {
		t.Errorf("echo = %q", got)
	}
	// Closing stdin ends the session; the child must exit cleanly.
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v (child exit status)", err)
	}
	if !cmd.ProcessState.Success() {
		t.Errorf("child exited with %v", cmd.ProcessState)
	}
}

// serveInMemory runs serveTransport over an in-memory transport and connects
// a client; the returned channel yields serveTransport's result.
func serveInMemory(t *testing.T, cx context.Context, opts Options, copts *mcp.ClientOptions) (*mcp.ClientSession, <-chan error) {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() { served <- serveTransport(cx, opts, st) }()
	cs, err := newClient(copts).Connect(testContext(t), ct, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return cs, served
}

func TestServeTransportEndsOnEOF(t *testing.T) {
	cs, served := serveInMemory(t, context.Background(), Options{}, nil)
	callTool(t, cs, "echo", map[string]any{"text": "x"})
	_ = cs.Close()
	if err := receive(t, served, "serve to return"); err != nil {
		t.Errorf("serve after EOF = %v, want nil", err)
	}
}

func TestServeTransportStopsSlowCallsOnCancel(t *testing.T) {
	cx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := newLogRecorder("slow: interrupted")
	copts, progress := progressRecorder()
	cs, served := serveInMemory(t, cx, Options{Logger: slog.New(logs)}, copts)
	defer func() { _ = cs.Close() }()

	params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": maxSlowMillis}}
	params.SetProgressToken("p")
	called := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(testContext(t), params)
		if err != nil {
			res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
		}
		called <- res
	}()
	receive(t, progress, "the slow call to start")

	cancel()
	if err := receive(t, served, "serve to return"); err != nil {
		t.Errorf("serve after cancel = %v, want nil", err)
	}
	if rec := receive(t, logs.records, "the slow call to stop"); rec.Message != "slow: interrupted by shutdown" {
		t.Errorf("log = %q", rec.Message)
	}
	// The call ends with a tool error or a closed connection, depending on
	// which reaches the client first.
	if res := receive(t, called, "the call to return"); !res.IsError {
		t.Errorf("the slow call succeeded after shutdown: %+v", res)
	}
}

// lineWriter sends each write to lines.
type lineWriter chan string

func (w lineWriter) Write(p []byte) (int, error) {
	w <- string(p)
	return len(p), nil
}

func TestServeHTTP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lines := make(lineWriter, 1)
	served := make(chan error, 1)
	go func() { served <- serveHTTP(cx, ln, Options{}, lines) }()

	url := strings.TrimSpace(receive(t, lines, "the URL"))
	if want := "http://" + ln.Addr().String() + "/mcp"; url != want {
		t.Fatalf("announced %q, want %q", url, want)
	}

	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	copts, progress := progressRecorder()
	cs, err := newClient(copts).Connect(testContext(t), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer func() { _ = cs.Close() }()
	if got := text(t, callTool(t, cs, "echo", map[string]any{"text": "over http"})); got != "over http" {
		t.Errorf("echo = %q", got)
	}

	// A slow call in flight must not hold up shutdown.
	params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": maxSlowMillis}}
	params.SetProgressToken("p")
	called := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(testContext(t), params)
		called <- err
	}()
	receive(t, progress, "the slow call to start")

	cancel()
	if err := receive(t, served, "serveHTTP to return"); err != nil {
		t.Errorf("serveHTTP = %v, want nil", err)
	}
	_ = receive(t, called, "the slow call to return")
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Error("still listening after shutdown")
	}
}

func TestServeHTTPListenError(t *testing.T) {
	err := ServeHTTP(t.Context(), "127.0.0.1:not-a-port", Options{})
	if err == nil || !strings.Contains(err.Error(), "listening on 127.0.0.1:not-a-port") {
		t.Errorf("ServeHTTP = %v", err)
	}
	var opErr *net.OpError
	if !errors.As(err, &opErr) {
		t.Errorf("error %v does not wrap the listen error", err)
	}
}

// TestHandlerSharesOneServer documents Handler's choice: sessions share one
// server, so a tool added in one session is listed, and announced, in all.
func TestHandlerSharesOneServer(t *testing.T) {
	ts := httptest.NewServer(Handler(Options{}))
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(func() { // after the sessions' cleanups (LIFO)
		ts.Close()
		hc.CloseIdleConnections()
	})

	changed := make(chan struct{}, 16)
	connect := func(copts *mcp.ClientOptions) *mcp.ClientSession {
		cs, err := newClient(copts).Connect(testContext(t), &mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: hc}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	a := connect(nil)
	b := connect(&mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}})

	callTool(t, a, "add_tool", map[string]any{"name": "shared"})
	receive(t, changed, "list_changed in the other session")
	if !listsTool(t, b, "extra_shared") {
		t.Error("the other session does not list extra_shared")
	}
}

func TestServeIO(t *testing.T) {
	mcpservetest.EchoOverIO(t, func(cx context.Context, r io.Reader, w io.Writer) error { return ServeIO(cx, Options{}, r, w) })
}
