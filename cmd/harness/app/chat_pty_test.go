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

// startOnTerminal starts cmd (the harness) in a new pseudo-terminal, killed if the test ends
// before it does; exit waits for its exit status.
func startOnTerminal(t *testing.T, cmd *exec.Cmd) (s *ptytest.Screen, exit func() int) {
	t.Helper()
	s = ptytest.Open(t)
	s.Start(cmd)
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return s, func() int {
		err := cmd.Wait()
		if _, ok := errors.AsType[*exec.ExitError](err); err != nil && !ok {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode()
	}
}

// chatOnTerminal starts harness chat in a pseudo-terminal, its model the local server srv.
func chatOnTerminal(t *testing.T, srv *modeltest.Server, flags ...string) (*ptytest.Screen, *exec.Cmd, func() int) {
	t.Helper()
	state := t.TempDir()
	cmd := harnessCmd(t, append(flags, "chat")...)
	cmd.Env = append(cmd.Env, "DEEPSEEK_BASE_URL="+srv.URL, "DEEPSEEK_API_KEY="+srv.Key, "XDG_STATE_HOME="+state, "HOME="+state)
	s, exit := startOnTerminal(t, cmd)
	return s, cmd, exit
}

// heldChat is the model of the chat tests: a tool call the permissions ask about
// (mcp__demo__add_tool), the answer after it, then a turn whose first token is held until
// hold is closed; third is closed when that turn asks the model.
type heldChat struct {
	srv         *modeltest.Server
	hold, third chan struct{}
}

func newHeldChat(t *testing.T) *heldChat {
	m := &heldChat{hold: make(chan struct{}), third: make(chan struct{})}
	replies := []modeltest.Reply{
		{Reasoning: "Add the tool first.", ToolCalls: []modeltest.ToolCall{{ID: "call_1", Name: "mcp__demo__add_tool", Arguments: `{"name":"greet"}`}}},
		{Reasoning: "Done.", Content: "I added the tool extra_greet."},
		{Content: "never shown", Hold: m.hold},
	}
	var n atomic.Int32
	m.srv = modeltest.New(t, modeltest.Options{Reply: func(*modeltest.Call) modeltest.Reply {
		i := n.Add(1) - 1
		if i == 2 {
			close(m.third)
		}
		return replies[min(int(i), 2)]
	}})
	return m
}

// approve plays the first turn on s: a message, the reasoning streamed, the tool call the
// permissions ask about answered at the prompt, its line with the outcome, the answer and
// the turn's usage.
func (m *heldChat) approve(s *ptytest.Screen) {
	s.Type("add a greeting tool\r")
	s.Expect("Add the tool first.")
	s.Expect(`Allow the agent to run mcp__demo__add_tool {"name":"greet"}? [y]es, [a]lways this session, [n]o: `)
	s.Type("y\r")
	s.Expect("mcp__demo__add_tool ✓")
	s.Expect("I added the tool extra_greet.")
	s.Expect("2 steps · ")
	s.Expect("> ")
}

// cancelAndLeave sends a message whose first token never comes: Ctrl-C cancels the turn
// and the chat goes on; a second Ctrl-C, at the prompt, leaves.
func (m *heldChat) cancelAndLeave(t *testing.T, s *ptytest.Screen, cmd *exec.Cmd) {
	t.Helper()
	s.Type("and now?\r")
	<-m.third
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	s.Expect("(cancelled)")
	s.Expect("> ")
	close(m.hold)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
}

// TestChatOnTerminal: a message, the answer streamed with its reasoning, a tool call the
// permissions ask about answered at the prompt, its line with the outcome, the turn's usage;
// then Ctrl-C cancels a turn whose model is slow to answer, and Ctrl-C at the prompt leaves.
func TestChatOnTerminal(t *testing.T) {
	t.Parallel()
	m := newHeldChat(t)
	s, cmd, exit := chatOnTerminal(t, m.srv)
	s.Expect("harness chat · the main agent · model ")
	s.Expect("> ")
	s.Type("/modle\r")
	s.Expect(`unknown command /modle (did you mean "/model"?) (/help lists them)`)
	s.Expect("> ")
	m.approve(s)
	m.cancelAndLeave(t, s, cmd)
	if code := exit(); code != ExitOK {
		t.Fatalf("exit %d; screen:\n%s", code, s.All())
	}
}

// TestChatOnHost: with a host running, chat talks with the host's agent (its servers: this
// process starts none): the approval is asked on this terminal and answered on the host,
// Ctrl-C cancels the turn on the host, and /tools lists the host's tools.
func TestChatOnHost(t *testing.T) {
	t.Parallel()
	m := newHeldChat(t)
	startRun(t, testEnv(t), "-p", agentProfile(t, m.srv, "  agent:\n    use: agent\n"), "run")
	cmd := harnessCmd(t, "chat")
	s, exit := startOnTerminal(t, cmd)
	s.Expect("harness chat · the main agent · model ")
	s.Expect("on the host (pid ")
	s.Expect("> ")
	m.approve(s)
	s.Type("/tools\r")
	s.Expect("mcp__demo__echo ")
	s.Expect("> ")
	m.cancelAndLeave(t, s, cmd)
	if code := exit(); code != ExitOK {
		t.Fatalf("exit %d; screen:\n%s", code, s.All())
	}
	if strings.Contains(s.All(), "demo: connect") {
		t.Errorf("chat started servers of its own:\n%s", s.All())
	}
}
