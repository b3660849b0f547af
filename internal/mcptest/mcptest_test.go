package mcptest_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/internal/mcptest"
)

func TestMain(m *testing.M) { mcptest.Main(m) }

func wait(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

// whoami connects over tr and calls whoami.
func whoami(t *testing.T, tr mcp.Transport) string {
	t.Helper()
	cl := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil)
	cs, err := cl.Connect(wait(t), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ServerInfo.Name; got != mcptest.Implementation.Name {
		t.Fatalf("server name %q", got)
	}
	res, err := cs.CallTool(wait(t), &mcp.CallToolParams{Name: "whoami"})
	if err != nil {
		t.Fatal(err)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

func TestStdio(t *testing.T) {
	command, env := mcptest.Stdio(t, mcptest.Normal, "s1")
	cmd := exec.Command(command)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if got := whoami(t, &mcp.CommandTransport{Command: cmd}); !strings.HasPrefix(got, "s1 pid=") {
		t.Fatalf("whoami %q", got)
	}

	command, env = mcptest.Stdio(t, mcptest.ExitWithArgs, "")
	cmd = exec.Command(command, "--x")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	if ee, ok := errors.AsType[*exec.ExitError](err); !ok || ee.ExitCode() != 3 || !strings.Contains(string(out), `bad arguments ["--x"]`) {
		t.Fatalf("exit-with-args: %v %s", err, out)
	}
}

func TestInMemory(t *testing.T) {
	if got := whoami(t, mcptest.InMemory(t, mcptest.NewServer("mem"))); !strings.HasPrefix(got, "mem pid=") {
		t.Fatalf("whoami %q", got)
	}
}

// A restart forgets the sessions: the old session's next call fails, a new one works.
func TestHTTPRestart(t *testing.T) {
	h := mcptest.NewHTTP(t, nil)
	cl := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil)
	cs, err := cl.Connect(wait(t), &mcp.StreamableClientTransport{Endpoint: h.URL(), DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.CallTool(wait(t), &mcp.CallToolParams{Name: "whoami"}); err != nil {
		t.Fatal(err)
	}
	if n := h.Sessions(-1); n != 1 {
		t.Fatalf("%d sessions", n)
	}
	h.Restart()
	if _, err := cs.CallTool(wait(t), &mcp.CallToolParams{Name: "whoami"}); err == nil {
		t.Fatal("the old session survived the restart")
	}
	if got := whoami(t, &mcp.StreamableClientTransport{Endpoint: h.URL(), DisableStandaloneSSE: true}); !strings.HasPrefix(got, "http pid=") {
		t.Fatalf("whoami after restart %q", got)
	}
	if h.Sessions(0) != 1 {
		t.Fatalf("the first server lost its session record: %d", h.Sessions(0))
	}
	h.CloseSessions(0)
	if h.Sessions(0) != 0 {
		t.Fatal("CloseSessions left a session")
	}
}

// The test server answers whoami with its label, so a test can tell instances apart.
func ExampleNewServer() {
	ct, st := mcp.NewInMemoryTransports()
	ss, err := mcptest.NewServer("first").Connect(context.Background(), st, nil)
	if err != nil {
		panic(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(cs.InitializeResult().ServerInfo.Name, res.Content[0].(*mcp.TextContent).Text)
	// Output: mcpm-test hi
}
