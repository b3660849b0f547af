//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package app

import (
	"strings"
	"testing"

	"github.com/cordisgo/harness/internal/modeltest"
)

// TestChatFormTakesTheFirstLine: a server's form raised by the agent's tool call reads the
// first line typed — one keyboard owns the terminal — and nothing typed for the form ever
// becomes a message to the model (issue 35, item 1).
func TestChatFormTakesTheFirstLine(t *testing.T) {
	t.Parallel()
	srv := modeltest.New(t, modeltest.Options{Replies: []modeltest.Reply{
		{ToolCalls: []modeltest.ToolCall{{ID: "call_1", Name: "mcp__demo__ask", Arguments: `{}`}}},
		{Content: "Thanks."},
		{Content: "Bye."},
	}})
	s, _, exit := chatOnTerminal(t, srv)
	s.Expect("> ")
	s.Type("ask me\r")
	s.Expect("Name (required): What to call you\r\n  text, 1 to 40 characters\r\n  [Ada] > ")
	s.Type("Carol\r")
	s.Expect("[36] > ")
	s.Type("\r\r\r\r") // age, color, subscribe, token: the defaults
	s.Expect("Send? [Y/n/cancel] ")
	s.Type("\r")
	s.Expect("sent to demo")
	s.Expect("Thanks.")
	s.Expect("> ")
	s.Type("done\r")
	s.Expect("Bye.")
	s.Expect("> ")
	s.Type("\x04") // Ctrl-D leaves
	if code := exit(); code != ExitOK {
		t.Fatalf("exit %d; screen:\n%s", code, s.All())
	}
	answered := false
	for _, r := range srv.Accepted() {
		body := string(r.Body)
		answered = answered || strings.Contains(body, "name=Carol")
		if strings.Contains(body, `"role":"user","content":"Carol"`) {
			t.Errorf("the form's answer reached the model as a message:\n%s", body)
		}
	}
	if !answered {
		t.Errorf("the form's answer did not reach the tool; screen:\n%s", s.All())
	}
	if n := len(srv.Accepted()); n != 3 {
		t.Errorf("%d requests to the model, want 3 (two turns); screen:\n%s", n, s.All())
	}
}

// TestChatCtrlCAtApproval: Ctrl-C at an approval question cancels the question (the call
// is refused, the model told so) and the turn goes on to its end; the chat goes on, and
// Ctrl-C at an empty prompt leaves (issue 35, item 2).
func TestChatCtrlCAtApproval(t *testing.T) {
	t.Parallel()
	srv := modeltest.New(t, modeltest.Options{Replies: []modeltest.Reply{
		{ToolCalls: []modeltest.ToolCall{{ID: "call_1", Name: "mcp__demo__add_tool", Arguments: `{"name":"greet"}`}}},
		{Content: "Not added, then."},
		{Content: "Still here."},
	}})
	s, _, exit := chatOnTerminal(t, srv)
	s.Expect("> ")
	s.Type("add a greeting tool\r")
	s.Expect(`Allow the agent to run mcp__demo__add_tool {"name":"greet"}? [y]es, [a]lways this session, [n]o: `)
	s.Type("\x03")
	s.Expect("(question cancelled: the call is refused)")
	s.Expect("mcp__demo__add_tool ✗ denied")
	s.Expect("Not added, then.")
	s.Expect("> ")
	s.Type("are you there?\r")
	s.Expect("Still here.")
	s.Expect("> ")
	s.Type("\x03")
	if code := exit(); code != ExitOK {
		t.Fatalf("exit %d; screen:\n%s", code, s.All())
	}
	if body := string(srv.Accepted()[1].Body); !strings.Contains(body, "the person cancelled the question") {
		t.Errorf("the model was not told the question was cancelled:\n%s", body)
	}
}

// TestChatMultiLine: a paste stays one message (bracketed paste), Alt-Enter starts a new line
// of the same message, and Up brings the last message back (issue 35, item 3).
func TestChatMultiLine(t *testing.T) {
	t.Parallel()
	srv := modeltest.New(t, modeltest.Options{Replies: []modeltest.Reply{
		{Content: "Got the paste."}, {Content: "Got two lines."}, {Content: "Again."},
	}})
	s, _, exit := chatOnTerminal(t, srv)
	s.Expect("> ")
	s.Type("\x1b[200~line one\rline two\x1b[201~\r")
	s.Expect("Got the paste.")
	s.Expect("> ")
	s.Type("first\x1b\rsecond\r")
	s.Expect("Got two lines.")
	s.Expect("> ")
	s.Type("\x1b[A\r") // Up: the last message again
	s.Expect("Again.")
	s.Expect("> ")
	s.Type("\x04")
	if code := exit(); code != ExitOK {
		t.Fatalf("exit %d; screen:\n%s", code, s.All())
	}
	calls := srv.Accepted()
	if len(calls) != 3 {
		t.Fatalf("%d requests, want 3; screen:\n%s", len(calls), s.All())
	}
	for i, want := range []string{`"content":"line one\nline two"`, `"content":"first\nsecond"`, `"content":"second"`} {
		if !strings.Contains(string(calls[i].Body), want) {
			t.Errorf("request %d lacks %s:\n%s", i, want, calls[i].Body)
		}
	}
}
