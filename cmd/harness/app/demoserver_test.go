package app

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// harnessCmd returns a command running the test binary as the harness.
func harnessCmd(t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, args...)
	cmd.Env = append(append(os.Environ(), testEnv(t)...), testMainEnv+"=1")
	return cmd
}

// exercise lists the demo server's tools and calls echo.
func exercise(t *testing.T, cx context.Context, cs *mcp.ClientSession) {
	t.Helper()
	tools, err := cs.ListTools(cx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if got := strings.Join(names, ","); !strings.Contains(got, "echo") || !strings.Contains(got, "add") {
		t.Errorf("tools = %s", got)
	}
	res, err := cs.CallTool(cx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "round trip"}})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "round trip" || res.IsError {
		t.Errorf("echo = %+v", res.Content)
	}
}

func newClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "harness-test", Version: "0"}, nil)
}

func TestDemoServerStdioSubprocess(t *testing.T) {
	t.Parallel()
	cx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cmd := harnessCmd(t, "demo-server")
	cs, err := newClient().Connect(cx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	exercise(t, cx, cs)
	if cs.InitializeResult().Instructions == "" {
		t.Error("no instructions")
	}
	if err := cs.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if !cmd.ProcessState.Success() {
		t.Errorf("demo-server exited with %v", cmd.ProcessState)
	}
}

func TestDemoServerStdioInProcess(t *testing.T) {
	t.Parallel()
	cx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	inR, inW := io.Pipe()   // client → server
	outR, outW := io.Pipe() // server → client
	done := make(chan int, 1)
	var stderr strings.Builder
	go func() {
		code := testOptions().Run(cx, []string{"demo-server"}, inR, outW, &stderr, nil)
		_ = outW.Close()
		done <- code
	}()
	cs, err := newClient().Connect(cx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	exercise(t, cx, cs)
	_ = cs.Close()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Errorf("exit %d, stderr %s", code, stderr.String())
		}
	case <-cx.Done():
		t.Fatal("demo-server did not end when its client closed stdin")
	}
}

func TestDemoServerHTTPAndSIGTERM(t *testing.T) {
	t.Parallel()
	cx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cmd := harnessCmd(t, "demo-server", "--http", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	lines := bufio.NewScanner(stderr)
	var url string
	for url == "" && lines.Scan() {
		if l := strings.TrimSpace(lines.Text()); strings.HasPrefix(l, "http://") {
			url = l
		}
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	if url == "" {
		t.Fatal("no URL announced")
	}
	cs, err := newClient().Connect(cx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	exercise(t, cx, cs)
	_ = cs.Close()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("demo-server after SIGTERM: %v", err)
	}
}
