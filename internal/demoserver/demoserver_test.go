package demoserver

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// childEnv makes the test binary act as a stdio demo server (see
// TestServeStdioSubprocess).
const childEnv = "DEMOSERVER_TEST_STDIO_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		cx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := ServeStdio(cx, Options{Name: "stdio-child"})
		stop()
		if err != nil {
			_, _ = os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// waitTimeout bounds every wait in these tests. It is a failure deadline, not
// a delay: nothing sleeps for it.
const waitTimeout = 30 * time.Second

// testContext returns a context that ends with the test or after waitTimeout.
func testContext(t *testing.T) context.Context {
	t.Helper()
	cx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	t.Cleanup(cancel)
	return cx
}

// receive waits for a value on ch, failing the test after waitTimeout.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitTimeout):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// A transport names one way of connecting a client to a demo server.
type transport struct {
	name    string
	connect func(t *testing.T, opts Options, copts *mcp.ClientOptions) *mcp.ClientSession
}

// transports are the connections every protocol-level test runs over: the
// in-memory transport with the SDK's newest protocol, the in-memory transport
// with the session-based protocol the harness pins for stdio, and Streamable
// HTTP through Handler.
var transports = []transport{
	{"memory", func(t *testing.T, opts Options, copts *mcp.ClientOptions) *mcp.ClientSession {
		return connectMemory(t, New(opts), copts, "")
	}},
	{"memory-2025-11-25", func(t *testing.T, opts Options, copts *mcp.ClientOptions) *mcp.ClientSession {
		return connectMemory(t, New(opts), copts, "2025-11-25")
	}},
	{"http", connectHTTP},
}

// forEachTransport runs f as a subtest over every transport.
func forEachTransport(t *testing.T, f func(t *testing.T, tr transport)) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) { f(t, tr) })
	}
}

func newClient(copts *mcp.ClientOptions) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "demoserver-test", Version: "0"}, copts)
}

// connectMemory connects a client to s in memory; protocol "" means the
// client's default. The session is closed when the test ends.
func connectMemory(t *testing.T, s *mcp.Server, copts *mcp.ClientOptions, protocol string) *mcp.ClientSession {
	t.Helper()
	cx := testContext(t)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(cx, st, nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	var sopts *mcp.ClientSessionOptions
	if protocol != "" {
		sopts = &mcp.ClientSessionOptions{ProtocolVersion: protocol}
	}
	cs, err := newClient(copts).Connect(cx, ct, sopts)
	if err != nil {
		_ = ss.Close()
		t.Fatalf("client connect: %v", err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return cs
}

// connectHTTP serves Handler(opts) with httptest and connects a client to it.
func connectHTTP(t *testing.T, opts Options, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ts := httptest.NewServer(Handler(opts))
	hc := &http.Client{Transport: &http.Transport{}}
	cs, err := newClient(copts).Connect(testContext(t), &mcp.StreamableClientTransport{
		Endpoint:   ts.URL,
		HTTPClient: hc,
	}, nil)
	if err != nil {
		ts.Close()
		t.Fatalf("client connect: %v", err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		ts.Close()
		hc.CloseIdleConnections()
	})
	return cs
}

// logRecorder is a slog.Handler that forwards records whose message starts
// with prefix to records, dropping them when nobody is listening.
type logRecorder struct {
	prefix  string
	records chan slog.Record
}

func newLogRecorder(prefix string) *logRecorder {
	return &logRecorder{prefix: prefix, records: make(chan slog.Record, 16)}
}

func (h *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (h *logRecorder) Handle(_ context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, h.prefix) {
		select {
		case h.records <- r:
		default:
		}
	}
	return nil
}

func (h *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logRecorder) WithGroup(string) slog.Handler      { return h }

// attr returns the value of the attribute key of r, or "".
func attr(r slog.Record, key string) string {
	var v string
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v = a.Value.String()
			return false
		}
		return true
	})
	return v
}

// callTool calls a tool and fails the test on a protocol error.
// listsTool reports whether cs's tools/list holds the tool name.
func listsTool(t *testing.T, cs *mcp.ClientSession, name string) bool {
	t.Helper()
	list, err := cs.ListTools(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(list.Tools, func(tool *mcp.Tool) bool { return tool.Name == name })
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(testContext(t), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

// text returns the text of a result made of one text block.
func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("content has %d blocks, want 1: %+v", len(res.Content), res.Content)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want *mcp.TextContent", res.Content[0])
	}
	return tc.Text
}
