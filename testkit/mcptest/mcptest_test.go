package mcptest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/testkit/mcptest"
)

func TestMain(m *testing.M) { mcptest.Main(m) }

func wait(t *testing.T) context.Context {
	cx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return cx
}

// whoami connects over tr and calls whoami.
func whoami(t *testing.T, tr mcp.Transport) string {
	t.Helper()
	cl := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil)
	cs, err := cl.Connect(wait(t), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
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

// A Hang server reports its start and the initialize it holds, with its pid.
func TestStdioEvents(t *testing.T) {
	var started []int
	ev := mcptest.NewEvents(t, func(pid int) { started = append(started, pid) })
	command, env := mcptest.Stdio(t, mcptest.Hang, "")
	env[mcptest.EventsEnv] = ev.Path()
	cmd := exec.Command(command)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stderr = os.Stderr
	cx, cancel := context.WithCancel(wait(t))
	done := make(chan error, 1)
	go func() {
		_, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(cx, &mcp.CommandTransport{Command: cmd}, nil)
		done <- err
	}()
	start := ev.Wait(t, 0, "start")
	if init := ev.Wait(t, 0, "initialize"); init.PID != start.PID || len(started) != 1 || started[0] != start.PID {
		t.Fatalf("start %+v, initialize %+v, onStart %v", start, init, started)
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a hanging server initialized")
	}
	if n := ev.Count(0, "list"); n != 0 {
		t.Fatalf("%d lists", n)
	}
}

// storm adds a tool and announces it with a burst; block ends when released; stats count.
func TestControl(t *testing.T) {
	srv, ctl := mcptest.NewControlled("mem")
	changed := make(chan struct{}, 2000)
	cl := mcp.NewClient(&mcp.Implementation{Name: "t"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := cl.Connect(wait(t), mcptest.InMemory(t, srv), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	res, err := cs.CallTool(wait(t), &mcp.CallToolParams{Name: "storm", Arguments: map[string]any{"n": 5}})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "stormed_1" {
		t.Fatalf("storm: %v %v", res, err)
	}
	for range 5 {
		select {
		case <-changed:
		case <-wait(t).Done():
			t.Fatal("fewer than 5 tools/list_changed")
		}
	}
	if _, err := cs.ListTools(wait(t), nil); err != nil {
		t.Fatal(err)
	}
	ctl.Release()
	res, err = cs.CallTool(wait(t), &mcp.CallToolParams{Name: "block"})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "released" {
		t.Fatalf("block after release: %v %v", res, err)
	}
	if st := ctl.Stats(); st.Lists != 1 || st.Aborted != 0 {
		t.Fatalf("stats %+v", st)
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
	defer func() { _ = cs.Close() }()
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
	defer func() { _ = ss.Close() }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		panic(err)
	}
	defer func() { _ = cs.Close() }()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(cs.InitializeResult().ServerInfo.Name, res.Content[0].(*mcp.TextContent).Text)
	// Output: mcpm-test hi
}
