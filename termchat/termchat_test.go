package termchat_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/hostview"
	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/agent"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/remote"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/termchat"
	"github.com/cordisgo/harness/testkit/agenttest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// serveTools serves harness/tools on root the way a host does (it is the host's), from the
// root's registry, each listing passed through edit first when it is not nil.
func serveTools(t *testing.T, root *ctx.Context, edit func([]toolregistry.Info)) {
	t.Helper()
	if _, err := host.MethodTools.Expose(root, func(context.Context, struct{}) ([]toolregistry.Info, error) {
		reg, _ := toolregistry.Key.Get(root)
		tools := reg.List(root)
		if edit != nil {
			edit(tools)
		}
		return tools, nil
	}); err != nil {
		t.Fatal(err)
	}
}

// chatLines runs a chat with root's agent that reads the lines of input, and returns what
// it wrote.
func chatLines(t *testing.T, root *ctx.Context, input string) string {
	t.Helper()
	var out bytes.Buffer
	if err := termchat.Run(ctxtest.Wait(t), termchat.Options{Caller: remote.NewLocal(root), In: strings.NewReader(input), Out: &out}); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// expectAll fails the test for each of wants that got does not contain.
func expectAll(t *testing.T, got string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
}

// A chat read from lines: a message answered after its approval, the tools, an unknown
// command with a did-you-mean, a message refused ("n"), and /exit.
func TestChat(t *testing.T) {
	root := agenttest.New(t,
		modeltest.Reply{Reasoning: "A note.", ToolCalls: []modeltest.ToolCall{{ID: "call_1", Name: "note", Arguments: `{"text":"milk"}`}}},
		modeltest.Reply{Content: "Noted: milk."},
		modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "call_2", Name: "note", Arguments: `{"text":"eggs"}`}}},
		modeltest.Reply{Content: "Not noted."},
	)
	serveTools(t, root, nil)
	got := chatLines(t, root, "note milk\ny\n/tools\n/tols\n/model flash\nnote eggs\nn\n/exit\n")
	// /model switches the conversation's model: the same session goes on.
	if banners := strings.Count(got, "harness chat · the main agent"); banners != 2 {
		t.Errorf("%d banners, want 2 (the start and /model):\n%s", banners, got)
	}
	first, _, _ := strings.Cut(got[strings.Index(got, "session ")+len("session "):], " ")
	if strings.Count(got, "session "+first) != 2 {
		t.Errorf("/model started another session than %s:\n%s", first, got)
	}
	expectAll(t, got,
		"harness chat · the main agent · model flash · session ",
		"A note.", "Allow the agent to run note", "note ✓", "waiting for approval)", "Noted: milk.",
		"note                                     Writes a note down.",
		`unknown command /tols (did you mean "/tools"?)`,
		"note ✗ denied", "Not noted.",
	)
}

// /compact summarises the conversation on demand and marks the place; with nothing to
// compact it says so.
func TestCompact(t *testing.T) {
	root := agenttest.New(t,
		modeltest.Reply{Content: "Hello."},
		modeltest.Reply{Content: "Hello again."},
		modeltest.Reply{Content: "Two greetings were exchanged."}, // the summary
		modeltest.Reply{Content: "Still here."},
	)
	expectAll(t, chatLines(t, root, "/compact\nhi\nhi again\n/compact the greetings\nstill there?\n/exit\n"),
		"compact: agent: nothing to compact",
		"── conversation compacted (manual: the greetings) · 2 messages summarised · about ",
		"Still here.",
	)
}

// TestChatToolView (issue 38, item 6): a tool with an interactive view (an MCP App's
// _meta.ui, in the registry's metadata) says so on its call's line and in /tools, with how
// to open it.
func TestChatToolView(t *testing.T) {
	root := agenttest.New(t,
		modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "call_1", Name: "note", Arguments: `{"text":"milk"}`}}},
		modeltest.Reply{Content: "Noted: milk."},
	)
	serveTools(t, root, func(tools []toolregistry.Info) {
		for i := range tools {
			if tools[i].Name == "note" { // as mcpclient records a tool whose server names a view
				tools[i].Meta = map[string]string{mcpclient.MetaUIResource: "ui://notes/view.html"}
			}
		}
	})
	expectAll(t, chatLines(t, root, "note milk\ny\n/tools\n/exit\n"),
		"note ✓", "its interactive view is in the page's Chat view (harness open)",
		"note                                     [view] Writes a note down.",
		hostview.ViewNote,
	)
}

// watched is an output the test waits on: each write wakes the waiters.
type watched struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{}
}

func (w *watched) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	return w.buf.Write(p)
}

func (w *watched) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// wait waits until the output holds want.
func (w *watched) wait(t *testing.T, cx context.Context, want string) {
	t.Helper()
	for !strings.Contains(w.String(), want) {
		select {
		case <-w.wrote:
		case <-cx.Done():
			t.Fatalf("no %q in:\n%s", want, w.String())
		}
	}
}

// An approval answered elsewhere (a page following the session answers agent/approve)
// ends the question on the terminal: it says so, and the turn goes on.
func TestApprovalAnsweredElsewhere(t *testing.T) {
	root := agenttest.New(t,
		modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "call_1", Name: "note", Arguments: `{"text":"milk"}`}}},
		modeltest.Reply{Content: "Noted: milk."},
	)
	cx := ctxtest.Wait(t)
	in, typed := io.Pipe()
	out := &watched{wrote: make(chan struct{}, 1)}
	done := make(chan error, 1)
	go func() { done <- termchat.Run(cx, termchat.Options{Caller: remote.NewLocal(root), In: in, Out: out}) }()
	if _, err := io.WriteString(typed, "note milk\n"); err != nil {
		t.Fatal(err)
	}
	out.wait(t, cx, "Allow the agent to run note")
	svc, _ := agent.Key.Get(root)
	open := svc.Open()
	if len(open) != 1 || len(open[0].Pending()) != 1 {
		t.Fatalf("open sessions %d, pending %v", len(open), open[0].Pending())
	}
	if err := open[0].Approve(open[0].Pending()[0].ID, permission.Answer{Decision: permission.Allow}); err != nil {
		t.Fatal(err)
	}
	out.wait(t, cx, "Noted: milk.")
	if _, err := io.WriteString(typed, "/exit\n"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	_ = typed.Close()
	expectAll(t, out.String(), "(answered elsewhere)", "note ✓")
}

// TestCommandsHelp: /help (and harness chat --help) says what every command does, one per
// line.
func TestCommandsHelp(t *testing.T) {
	lines := strings.Split(strings.TrimSuffix(termchat.CommandsHelp(), "\n"), "\n")
	if len(lines) != len(termchat.Commands) {
		t.Fatalf("%d lines for %d commands:\n%s", len(lines), len(termchat.Commands), termchat.CommandsHelp())
	}
	for i, l := range lines {
		usage, help, _ := strings.Cut(strings.TrimSpace(l), "  ")
		if usage != termchat.Commands[i] || strings.TrimSpace(help) == "" {
			t.Errorf("line %q: want %q and what it does", l, termchat.Commands[i])
		}
	}
}
