package mcpserve

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/cordisgo/harness/internal/loopback"
	"github.com/cordisgo/harness/internal/mcpserve/mcpservetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type echoIn struct {
	Text string `json:"text"`
}

func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	return s
}

func TestListenAddr(t *testing.T) {
	for in, want := range map[string]string{
		"":             "127.0.0.1:0",
		":8080":        "127.0.0.1:8080",
		"0.0.0.0:8080": "0.0.0.0:8080",
		"[::1]:9":      "[::1]:9",
		"localhost:1":  "localhost:1",
		"bad":          "bad",
	} {
		if got := ListenAddr(in); got != want {
			t.Errorf("ListenAddr(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestListenError(t *testing.T) {
	_, err := Listen(t.Context(), "demo", "127.0.0.1:not-a-port")
	if err == nil || !strings.Contains(err.Error(), "demo: listening on 127.0.0.1:not-a-port") {
		t.Errorf("Listen = %v", err)
	}
}

func TestIO(t *testing.T) {
	mcpservetest.EchoOverIO(t, func(cx context.Context, r io.Reader, w io.Writer) error { return IO(cx, newServer(), r, w) })
}

// bearer adds a token to every request.
type bearer struct {
	token string
	rt    http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.rt.RoundTrip(r)
}

// TestServeHTTPGuard: the front door refuses a foreign Host or Origin (403) and a missing or
// wrong token (401), and serves a client with the token until the context ends.
func TestServeHTTPGuard(t *testing.T) {
	ln, err := Listen(t.Context(), "t", "")
	if err != nil {
		t.Fatal(err)
	}
	cx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pr, pw := io.Pipe()
	served := make(chan error, 1)
	shutdowns := make(chan struct{}, 2)
	go func() {
		served <- ServeHTTP(cx, ln, newServer(), HTTPOptions{What: "t", Guard: loopback.Options{Addr: ln.Addr().String(), Token: "s3cret"},
			OnShutdown: func() { shutdowns <- struct{}{} }}, pw)
	}()
	url, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url = strings.TrimSpace(url)
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	defer func() { _ = pr.Close() }()

	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	status := func(mod func(*http.Request)) int {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		mod(req)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for name, c := range map[string]struct {
		mod  func(*http.Request)
		want int
	}{
		"no token":     {func(*http.Request) {}, 401},
		"wrong token":  {func(r *http.Request) { r.Header.Set("Authorization", "Bearer guess") }, 401},
		"rebound host": {func(r *http.Request) { r.Host = "evil.example"; r.Header.Set("Authorization", "Bearer s3cret") }, 403},
		"foreign page": {func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") }, 403},
	} {
		if got := status(c.mod); got != c.want {
			t.Errorf("%s: status %d, want %d", name, got, c.want)
		}
	}

	hc := &http.Client{Transport: bearer{"s3cret", tr}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connect with the token: %v", err)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "http"}})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "http" {
		t.Fatalf("echo: %v %v", res, err)
	}
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("ServeHTTP = %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("ServeHTTP did not return")
	}
	_ = cs.Close()
	if len(shutdowns) == 0 {
		t.Error("OnShutdown never ran")
	}
	if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		_ = c.Close()
		t.Error("still listening after shutdown")
	}
}
