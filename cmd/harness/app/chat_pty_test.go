//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package app

import (
	"errors"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/internal/ptytest"
)

// chatOnTerminal starts harness chat in a pseudo-terminal, its model the local server srv.
func chatOnTerminal(t *testing.T, srv *modeltest.Server, flags ...string) (*ptytest.Screen, *exec.Cmd, func() int) {
	t.Helper()
	s := ptytest.Open(t)
	state := t.TempDir()
	cmd := harnessCmd(t, append(flags, "chat")...)
	cmd.Env = append(cmd.Env, "DEEPSEEK_BASE_URL="+srv.URL, "DEEPSEEK_API_KEY="+srv.Key, "XDG_STATE_HOME="+state, "HOME="+state)
	s.Start(cmd)
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return s, cmd, func() int {
		err := cmd.Wait()
		if _, ok := errors.AsType[*exec.ExitError](err); err != nil && !ok {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode()
	}
}

// TestChatOnTerminal: a message, the answer streamed with its reasoning, a tool call the
// permissions ask about answered at the prompt, its line with the outcome, the turn's usage;
// then Ctrl-C cancels a turn whose model is slow to answer, and Ctrl-C at the prompt leaves.
func TestChatOnTerminal(t *testing.T) {
	hold, third := make(chan struct{}), make(chan struct{})
	replies := []modeltest.Reply{
		{Reasoning: "Add the tool first.", ToolCalls: []modeltest.ToolCall{{ID: "call_1", Name: "mcp__demo__add_tool", Arguments: `{"name":"greet"}`}}},
		{Reasoning: "Done.", Content: "I added the tool extra_greet."},
		{Content: "never shown", Hold: hold},
	}
	var n atomic.Int32
	srv := modeltest.New(t, modeltest.Options{Reply: func(*modeltest.Call) modeltest.Reply {
		i := n.Add(1) - 1
		if i == 2 {
			close(third)
		}
		return replies[min(int(i), 2)]
	}})
	s, cmd, exit := chatOnTerminal(t, srv)
	s.Expect("harness chat · the main agent · model ")
	s.Expect("> ")
	s.Type("add a greeting tool\r")
	s.Expect("Add the tool first.")
	s.Expect(`Allow the agent to run mcp__demo__add_tool {"name":"greet"}? [y]es, [a]lways this session, [n]o: `)
	s.Type("y\r")
	s.Expect("mcp__demo__add_tool ✓")
	s.Expect("I added the tool extra_greet.")
	s.Expect("2 steps · ")
	s.Expect("> ")

	// A turn whose first token never comes: Ctrl-C cancels it, the chat goes on.
	s.Type("and now?\r")
	<-third
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	s.Expect("(cancelled)")
	s.Expect("> ")
	close(hold)
	// Ctrl-C at the prompt leaves, cleanly.
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := exit(); code != ExitOK {
		t.Fatalf("exit %d; screen:\n%s", code, s.All())
	}
}

// TestChatOnHost: with a host running, chat talks with the host's agent (its servers: this
// process starts none): the approval is asked on this terminal and answered on the host,
// Ctrl-C cancels the turn on the host, and /tools lists the host's tools.
func TestChatOnHost(t *testing.T) {
	hold, third := make(chan struct{}), make(chan struct{})
	replies := []modeltest.Reply{
		{Reasoning: "Add the tool first.", ToolCalls: []modeltest.ToolCall{{ID: "call_1", Name: "mcp__demo__add_tool", Arguments: `{"name":"greet"}`}}},
		{Reasoning: "Done.", Content: "I added the tool extra_greet."},
		{Content: "never shown", Hold: hold},
	}
	var n atomic.Int32
	srv := modeltest.New(t, modeltest.Options{Reply: func(*modeltest.Call) modeltest.Reply {
		i := n.Add(1) - 1
		if i == 2 {
			close(third)
		}
		return replies[min(int(i), 2)]
	}})
	startRun(t, testEnv(t), "-p", agentProfile(t, srv, "  agent:\n    use: agent\n"), "run")
	s := ptytest.Open(t)
	cmd := harnessCmd(t, "chat")
	s.Start(cmd)
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	s.Expect("harness chat · the main agent · model ")
	s.Expect("on the host (pid ")
	s.Expect("> ")
	s.Type("add a greeting tool\r")
	s.Expect("Add the tool first.")
	s.Expect(`Allow the agent to run mcp__demo__add_tool {"name":"greet"}? [y]es, [a]lways this session, [n]o: `)
	s.Type("y\r")
	s.Expect("mcp__demo__add_tool ✓")
	s.Expect("I added the tool extra_greet.")
	s.Expect("2 steps · ")
	s.Expect("> ")
	s.Type("/tools\r")
	s.Expect("mcp__demo__echo ")
	s.Expect("> ")

	s.Type("and now?\r")
	<-third
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	s.Expect("(cancelled)")
	s.Expect("> ")
	close(hold)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v; screen:\n%s", err, s.All())
	}
	if strings.Contains(s.All(), "demo: connect") {
		t.Errorf("chat started servers of its own:\n%s", s.All())
	}
}
