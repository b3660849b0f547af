package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/hostgateway"
)

func TestServeRefusals(t *testing.T) {
	t.Parallel()
	r := run(t, nil, "serve", "--no-auth", "--addr", "0.0.0.0:0", "--endpoint-file", filepath.Join(t.TempDir(), "gw.json"))
	r.expect(t, ExitUsage, "", "refused on an address that is not loopback")
	r = run(t, nil, "serve", "--token-file", filepath.Join(t.TempDir(), "missing"), "--endpoint-file", filepath.Join(t.TempDir(), "gw.json"))
	r.expect(t, ExitUsage, "", "--token-file")
}

type bearerRT struct{ tok string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}

// TestServeHTTP runs serve on the default profile (the demo server over stdio) and talks
// to its routes with the go-sdk client, using the URL and token of the endpoint file.
func TestServeHTTP(t *testing.T) {
	t.Parallel()
	ep := filepath.Join(t.TempDir(), "gateway.json")
	cx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code, stderr := startServe(t, cx, "--addr", "127.0.0.1:0", "--endpoint-file", ep)
	fi, err := os.Stat(ep)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("endpoint file: %v %v", err, fi)
	}
	var e hostgateway.Endpoint
	b, _ := os.ReadFile(ep)
	if err := json.Unmarshal(b, &e); err != nil || e.Token == "" || !strings.HasSuffix(e.URL, "/mcp") {
		t.Fatalf("endpoint file %s: %v", b, err)
	}
	if strings.Contains(stderr.String(), e.Token) {
		t.Fatal("the token is in the log")
	}
	if !strings.Contains(stderr.String(), "gateway: "+e.URL+" (harness serve --print-client-config CLIENT") {
		t.Errorf("the gateway's URL is not said on a line of its own:\n%s", stderr.String())
	}
	// --print-client-config names the running gateway, as its endpoint file says (URL with
	// its port, token), not the default port.
	printed := run(t, testEnv(t), "serve", "--endpoint-file", ep, "--print-client-config", "qwen")
	printed.expect(t, ExitOK, `{"mcpServers":{"harness":{"headers":{"Authorization":"Bearer `+e.Token+`"},"httpUrl":"`+e.URL+`"}}}`, "running as pid")
	// The aggregated route offers the demo server's tools as demo__TOOL: the client adds its
	// own prefix (gateway.Options.ShortNames).
	for _, route := range []struct{ path, tool string }{{"", "demo__"}, {"/servers/demo", ""}} {
		client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{ElicitationHandler: answerAda})
		cs, err := client.Connect(cx, &mcp.StreamableClientTransport{Endpoint: e.URL + route.path, HTTPClient: &http.Client{Transport: bearerRT{e.Token}}}, nil)
		if err != nil {
			t.Fatalf("%s: %v", route.path, err)
		}
		res, err := cs.CallTool(cx, &mcp.CallToolParams{Name: route.tool + "echo", Arguments: map[string]any{"text": "through"}})
		if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "through" {
			t.Fatalf("%s: %v %+v", route.path, err, res)
		}
		// serve prepared the tree before the demo server connected: it offers elicitation,
		// and the question reaches this session.
		res, err = cs.CallTool(cx, &mcp.CallToolParams{Name: route.tool + "ask"})
		if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "name=Ada") {
			t.Fatalf("%s ask: %v %+v", route.path, err, res)
		}
		_ = cs.Close()
	}
	cancel()
	if rc := <-code; rc != ExitOK {
		t.Fatalf("serve exited %d:\n%s", rc, stderr.String())
	}
	if _, err := os.Stat(ep); !os.IsNotExist(err) {
		t.Fatalf("endpoint file left behind: %v", err)
	}
}

// startServe runs serve with args until cx is done and waits for it to listen.
func startServe(t *testing.T, cx context.Context, args ...string) (<-chan int, *watchWriter) {
	t.Helper()
	return startInProcess(t, cx, testEnv(t), "", "harness serve --print-client-config CLIENT", append([]string{"serve"}, args...)...)
}

// readEndpoint reads an endpoint file.
func readEndpoint(t *testing.T, path string) hostgateway.Endpoint {
	t.Helper()
	var e hostgateway.Endpoint
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &e)
	}
	if err != nil {
		t.Fatalf("endpoint file %s: %v", path, err)
	}
	return e
}

// TestServeSecondGateway: a second gateway on the same endpoint file, listening on every
// interface, neither overwrites nor removes the first one's file; its own (next to it)
// names a loopback URL that works, not "http://[::]:P"; and the token's scheme is matched
// case-insensitively.
func TestServeSecondGateway(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ep := filepath.Join(dir, "gateway.json")
	cx1, cancel1 := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel1()
	code1, _ := startServe(t, cx1, "--addr", "127.0.0.1:0", "--endpoint-file", ep)
	first := readEndpoint(t, ep)

	cx2, cancel2 := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel2()
	// (Without the remote API: the first serve is the host of these files.)
	code2, stderr2 := startServe(t, cx2, "--set", "plugins.remote.enabled=false", "--addr", ":0", "--endpoint-file", ep)
	if got := readEndpoint(t, ep); got != first {
		t.Fatalf("the first gateway's endpoint file was overwritten: %+v", got)
	}
	if !strings.Contains(stderr2.String(), "belongs to another running gateway") {
		t.Errorf("no word of the held endpoint file:\n%s", stderr2.String())
	}
	files, _ := filepath.Glob(filepath.Join(dir, "gateway-*.json"))
	if len(files) != 1 {
		t.Fatalf("second endpoint files %v", files)
	}
	second := readEndpoint(t, files[0])
	if !strings.HasPrefix(second.URL, "http://127.0.0.1:") || second.URL == first.URL {
		t.Fatalf("second gateway's URL %q", second.URL)
	}
	req, _ := http.NewRequestWithContext(cx2, http.MethodPost, second.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "bearer "+second.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s with a lower-case scheme: status %d", second.URL, resp.StatusCode)
	}

	cancel2()
	if rc := <-code2; rc != ExitOK {
		t.Fatalf("second serve exited %d:\n%s", rc, stderr2.String())
	}
	if _, err := os.Stat(files[0]); !os.IsNotExist(err) {
		t.Errorf("the second endpoint file was left behind: %v", err)
	}
	if got := readEndpoint(t, ep); got != first {
		t.Fatalf("the first gateway's endpoint file changed when the second ended: %+v", got)
	}
	cancel1()
	if rc := <-code1; rc != ExitOK {
		t.Fatalf("first serve exited %d", rc)
	}
	if _, err := os.Stat(ep); !os.IsNotExist(err) {
		t.Errorf("endpoint file left behind: %v", err)
	}
}

// answerAda is a downstream client's answer to the demo server's ask.
func answerAda(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "age": 36}}, nil
}

// TestServeStdio serves the aggregated route on stdin/stdout.
func TestServeStdio(t *testing.T) {
	t.Parallel()
	cx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	stderr := &watchWriter{}
	code := make(chan int, 1)
	go func() {
		rc := testOptions().Run(cx, []string{"serve", "--stdio"}, inR, outW, stderr, testEnv(t))
		_ = outW.Close()
		code <- rc
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{ElicitationHandler: answerAda})
	cs, err := client.Connect(cx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(cx, &mcp.CallToolParams{Name: "demo__echo", Arguments: map[string]any{"text": "piped"}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "piped" {
		t.Fatalf("%v %+v\n%s", err, res, stderr.String())
	}
	// The go-sdk client speaks 2026-07-28 here: the question comes as an input request.
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("protocol %s over stdio", v)
	}
	res, err = cs.CallTool(cx, &mcp.CallToolParams{Name: "demo__ask"})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "name=Ada") {
		t.Fatalf("ask: %v %+v\n%s", err, res, stderr.String())
	}
	_ = cs.Close()
	_ = inW.Close()
	if rc := <-code; rc != ExitOK {
		t.Fatalf("serve --stdio exited %d:\n%s", rc, stderr.String())
	}
}
