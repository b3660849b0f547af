//go:build linux

// Package agentworkspace runs the agent end to end with its hands: `harness chat` on a
// terminal, its model the local DeepSeek-rule server (internal/modeltest) scripted as a
// model fixing a failing test would work, the workspace server mounted by the profile, every
// approval answered at the terminal.
package agentworkspace

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/internal/ptytest"
)

// binDir holds the harness binary the tests build (harness), removed at the end.
var binDir string

func TestMain(m *testing.M) {
	var err error
	if binDir, err = os.MkdirTemp("", "agentworkspace-"); err != nil {
		panic(err)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { _ = os.RemoveAll(binDir) }))
}

var (
	buildOnce sync.Once
	buildErr  error
)

// harness builds the harness binary once and returns its path.
func harness(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(binDir, "harness")
	buildOnce.Do(func() {
		if out, err := exec.Command("go", "build", "-o", bin, "github.com/cordisgo/harness/cmd/harness").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return bin
}

// scratch is a module whose one test fails: Add subtracts.
var scratch = map[string]string{
	"go.mod":       "module scratch\n\ngo 1.26\n",
	"calc.go":      "package scratch\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int { return a - b }\n",
	"calc_test.go": "package scratch\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n",
}

// step is one answer of the scripted model: a tool call, or the final text. check, if set,
// looks at the result of the previous call first, as a model reads it.
type step struct {
	tool  string
	args  map[string]any
	text  string
	check func(result string) error
}

// script is the work of a model asked to fix the test: look around, read the code, run the
// tests, read the failure, fix the code, run them again, say what it did.
var script = []step{
	{tool: "mcp__workspace__list_dir", args: map[string]any{}},
	{tool: "mcp__workspace__read_file", args: map[string]any{"path": "calc.go"}, check: want("calc_test.go", "go.mod")},
	{tool: "mcp__workspace__shell", args: map[string]any{"command": "go test ./..."}, check: want("return a - b")},
	{tool: "mcp__workspace__edit_file", args: map[string]any{"path": "calc.go", "oldText": "return a - b", "newText": "return a + b"},
		check: want("exit status 1", "Add(2, 3) = -1, want 5", "FAIL")},
	{tool: "mcp__workspace__shell", args: map[string]any{"command": "go test ./..."}, check: want("edited calc.go: 1 replacement", "+func Add(a, b int) int { return a + b }")},
	{text: "Fixed: Add subtracted; it adds now and the test passes.", check: want("exit status 0", "ok  \tscratch")},
}

func want(parts ...string) func(string) error {
	return func(result string) error {
		for _, p := range parts {
			if !strings.Contains(result, p) {
				return fmt.Errorf("the result does not say %q: %s", p, result)
			}
		}
		return nil
	}
}

// model answers the conversation with the script's next step, after checking the last
// tool result; a surprise becomes the model's answer, which the test sees.
func model(t *testing.T) modeltest.Options {
	return modeltest.Options{Reply: func(c *modeltest.Call) modeltest.Reply {
		n := 0
		last := ""
		for _, m := range c.Messages {
			switch m.Role {
			case "assistant":
				if len(m.ToolCalls) > 0 {
					n++
				}
			case "tool":
				last = m.Content
			}
		}
		if n >= len(script) {
			return modeltest.Reply{Content: "unexpected: the script is over"}
		}
		s := script[n]
		if s.check != nil {
			if err := s.check(last); err != nil {
				return modeltest.Reply{Content: "unexpected: " + err.Error()}
			}
		}
		if s.tool == "" {
			return modeltest.Reply{Reasoning: "The test passes.", Content: s.text}
		}
		args, _ := json.Marshal(s.args)
		return modeltest.Reply{Reasoning: "Next: " + s.tool + ".", ToolCalls: []modeltest.ToolCall{{Name: s.tool, Arguments: string(args)}}}
	}}
}

// TestFixTheFailingTest: list, read, run go test, read the failure, edit, run it again,
// through harness chat with each approval answered at the terminal, which shows the
// command or the diff first.
func TestFixTheFailingTest(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("bash is needed")
	}
	goCache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	bin := harness(t)
	home, dir := t.TempDir(), t.TempDir()
	for name, body := range scratch {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The workspace as the profile mounts it: rooted where the harness runs, the user's Go
	// build cache writable so that go test is warm.
	gc := strings.TrimSpace(string(goCache))
	profile := filepath.Join(home, "fixer.yaml")
	if err := os.WriteFile(profile, []byte("extends: cli\nplugins:\n  workspace:\n    use: mcpclient\n    config:\n"+
		"      serverName: workspace\n      transport: stdio\n      command: ${HARNESS_SELF}\n"+
		"      args: [workspace-server, --writable, "+gc+"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := modeltest.New(t, model(t))

	cmd := exec.Command(bin, "-p", profile, "chat")
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HARNESS_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_STATE_HOME="+filepath.Join(home, ".local/state"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "GOCACHE="+gc, "DEEPSEEK_BASE_URL="+srv.URL, "DEEPSEEK_API_KEY="+srv.Key, "PAGER=cat")
	s := ptytest.Open(t)
	s.Start(cmd)
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	s.Expect("> ")
	s.Type("The test fails. Fix it.\r")
	// Reads run without asking; the command, the edit and the command again ask, each
	// showing what it will do.
	// The preview comes first: the command and where it runs, or the diff, coloured.
	for _, ask := range []struct{ tool, shows string }{
		{"mcp__workspace__shell", "$ go test ./...\r\n\x1b[2m(in " + dir},
		{"mcp__workspace__edit_file", "\x1b[31m-func Add(a, b int) int { return a - b }\x1b[0m\r\n\x1b[32m+func Add(a, b int) int { return a + b }\x1b[0m"},
		{"mcp__workspace__shell", "$ go test ./..."},
	} {
		s.Expect(ask.shows)
		s.Expect("Allow the agent to run " + ask.tool)
		s.Expect("? [y]es, [a]lways this session, [n]o: ")
		s.Type("y\r")
	}
	s.Expect("Fixed: Add subtracted; it adds now and the test passes.")
	s.Expect("> ")
	s.Type("\x04")
	if err := cmd.Wait(); err != nil {
		t.Errorf("harness chat: %v\n%s", err, s.All())
	}
	screen := s.All()
	if strings.Contains(screen, "unexpected:") {
		t.Fatalf("the scripted model was surprised:\n%s", screen)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "calc.go")); !strings.Contains(string(b), "return a + b") {
		t.Errorf("calc.go is now:\n%s", b)
	}
	test := exec.Command("go", "test", "./...")
	test.Dir = dir
	if out, err := test.CombinedOutput(); err != nil {
		t.Errorf("go test after the fix: %v\n%s", err, out)
	}
	t.Logf("the model was asked %d times; the screen:\n%s", len(srv.Accepted()), screen)
}
