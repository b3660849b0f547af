//go:build unix

package gatewayinterop

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// harnessBinary builds the harness binary once per test.
func harnessBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "harness")
	if out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "github.com/cordisgo/harness/cmd/harness").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestWorkspaceThroughServe: the workspace server's tools, mounted by a profile and served by
// `harness serve`, called by the TypeScript SDK client: list them, read, edit (the diff
// comes back), search, and run a command in the sandbox.
func TestWorkspaceThroughServe(t *testing.T) {
	bin := harnessBinary(t)
	home, root := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n\nfunc main() { println(\"hello\") }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	profile := filepath.Join(home, "workspace.yaml")
	if err := os.WriteFile(profile, []byte(`extends: cli
plugins:
  workspace:
    use: mcpclient
    config:
      serverName: workspace
      transport: stdio
      command: ${HARNESS_SELF}
      args: [workspace-server, --root, `+root+`]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", profile, "serve", "--addr", "127.0.0.1:0", "--endpoint-file", filepath.Join(home, "gateway.json"))
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_STATE_HOME="+filepath.Join(home, ".local/state"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "HARNESS_GATEWAY_TOKEN="+token)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	// The gateway says where it listens in its log line (text format: url=...).
	lines := bufio.NewScanner(stderr)
	url := ""
	var seen []string
	for url == "" && lines.Scan() {
		l := lines.Text()
		seen = append(seen, l)
		if strings.Contains(l, "gateway listening") {
			for _, f := range strings.Fields(l) {
				if u, ok := strings.CutPrefix(f, "url="); ok {
					url = u
				}
			}
		}
	}
	go func() {
		for lines.Scan() {
		}
	}()
	if url == "" {
		t.Fatalf("serve never said where it listens:\n%s", strings.Join(seen, "\n"))
	}

	out := ts(t, url,
		op("tools/list", map[string]any{}),
		op("tools/call", map[string]any{"name": "workspace__read_file", "arguments": map[string]any{"path": "main.go"}}),
		op("tools/call", map[string]any{"name": "workspace__edit_file", "arguments": map[string]any{
			"path": "main.go", "oldText": `println("hello")`, "newText": `println("hello, gateway")`}}),
		op("tools/call", map[string]any{"name": "workspace__grep", "arguments": map[string]any{"pattern": "gateway"}}),
		op("tools/call", map[string]any{"name": "workspace__shell", "arguments": map[string]any{"command": "cat main.go; echo done > out.txt"}}),
	)
	var list struct {
		Tools []struct {
			Name        string         `json:"name"`
			Annotations map[string]any `json:"annotations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(out.Results[0], &list); err != nil {
		t.Fatalf("tools/list: %s", out.Results[0])
	}
	found := map[string]map[string]any{}
	for _, tool := range list.Tools {
		found[tool.Name] = tool.Annotations
	}
	for _, name := range []string{"read_file", "list_dir", "glob", "grep", "edit_file", "write_file", "shell", "shell_output", "shell_kill"} {
		a, ok := found["workspace__"+name]
		if !ok {
			t.Errorf("the gateway does not list %s (it lists %d tools)", name, len(list.Tools))
			continue
		}
		if ro := name == "read_file" || name == "list_dir" || name == "glob" || name == "grep" || name == "shell_output"; a["readOnlyHint"] != ro {
			t.Errorf("%s: annotations %v reached the client", name, a)
		}
	}
	text := func(i int) string {
		var r struct {
			Content []struct{ Text string } `json:"content"`
			IsError bool                    `json:"isError"`
		}
		if err := json.Unmarshal(out.Results[i], &r); err != nil || len(r.Content) == 0 {
			t.Fatalf("result %d: %s", i, out.Results[i])
		}
		if r.IsError {
			t.Errorf("result %d is a tool error: %s", i, r.Content[0].Text)
		}
		return r.Content[0].Text
	}
	if got := text(1); !strings.Contains(got, "     3\tfunc main() { println(\"hello\") }") {
		t.Errorf("read_file: %q", got)
	}
	if got := text(2); !strings.Contains(got, "-func main() { println(\"hello\") }\n+func main() { println(\"hello, gateway\") }") {
		t.Errorf("edit_file's diff: %q", got)
	}
	if got := text(3); got != "main.go:3:func main() { println(\"hello, gateway\") }\n" {
		t.Errorf("grep: %q", got)
	}
	if got := text(4); !strings.HasPrefix(got, "exit status 0") || !strings.Contains(got, "hello, gateway") {
		t.Errorf("shell: %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "out.txt")); string(b) != "done\n" {
		t.Errorf("the command's file: %q", b)
	}
}
