package app

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/workspace"
)

// callText calls a tool and returns its text, failing on a tool error.
func callText(t *testing.T, cx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(cx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		t.Fatalf("%s: tool error: %s", tool, b.String())
	}
	return b.String()
}

// TestWorkspaceServerStdio runs `harness workspace-server` as a stdio server: its files
// and its shell, whose commands run through the harness binary (the sandbox helper).
func TestWorkspaceServerStdio(t *testing.T) {
	cx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := harnessCmd(t, "workspace-server", "--root", dir)
	cs, err := newClient().Connect(cx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	if d := cs.InitializeResult().ServerInfo.Description; !strings.Contains(d, "sandbox workspace-write") {
		t.Errorf("description %q", d)
	}
	if got := callText(t, cx, cs, "read_file", map[string]any{"path": "hello.txt"}); got != "     1\thello\n" {
		t.Errorf("read_file: %q", got)
	}
	got := callText(t, cx, cs, "shell", map[string]any{"command": "cat hello.txt && echo made > new.txt"})
	if !strings.HasPrefix(got, "exit status 0") || !strings.Contains(got, "hello") {
		t.Errorf("shell: %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "new.txt")); string(b) != "made\n" {
		t.Errorf("new.txt: %q", b)
	}
}

func TestWorkspaceServerFlags(t *testing.T) {
	r := run(t, nil, "workspace-server", "--mode", "yolo")
	r.expect(t, ExitUsage, "", `--mode: workspace mode "yolo": expected "read-only", "workspace-write" or "danger-full-access"`)
	r = run(t, nil, "workspace-server", "--http", "127.0.0.1:0")
	r.expect(t, ExitUsage, "", "--http needs a bearer token")
}

// TestWorkspaceServerHTTP serves the workspace over Streamable HTTP with a token.
func TestWorkspaceServerHTTP(t *testing.T) {
	cx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	cmd := harnessCmd(t, "workspace-server", "--root", dir, "--http", "127.0.0.1:0")
	cmd.Env = append(cmd.Env, workspace.TokenEnv+"=tok3n")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}()
	sc := bufio.NewScanner(stderr)
	url := ""
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, "http://") {
			url = l
			break
		}
	}
	go func() {
		for sc.Scan() {
		}
	}()
	if url == "" {
		t.Fatal("no URL announced")
	}
	resp, err := http.Post(url, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the token: %d", resp.StatusCode)
	}
	hc := &http.Client{Transport: bearerTransport{"tok3n"}}
	cs, err := newClient().Connect(cx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	if got := callText(t, cx, cs, "list_dir", map[string]any{}); !strings.Contains(got, "empty directory") {
		t.Errorf("list_dir: %q", got)
	}
}

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}
