//go:build unix

package interop

import (
	"errors"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/elicitation"
	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/plugins/agent"
	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/model/openaicompat"
	"github.com/cordisgo/harness/plugins/remote"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/sampling"
	"github.com/cordisgo/harness/termchat"
	"github.com/cordisgo/harness/testkit/elicittest"
)

// scriptedModel answers as a model using a tool would: its first answer calls tool with
// args, the next ones (once it has a result) say what the last tool result began with.
func scriptedModel(tool, args string) func(*modeltest.Call) modeltest.Reply {
	return func(c *modeltest.Call) modeltest.Reply {
		var last string
		for _, m := range c.Messages {
			if m.Role == "tool" {
				last = m.Content
			}
		}
		if last == "" {
			return modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "call_research", Name: tool, Arguments: args}}}
		}
		first, _, _ := strings.Cut(last, "\n")
		return modeltest.Reply{Content: "The tool said: " + first}
	}
}

// offerAgent offers on root what the agent answers (sampling), as a host does before it
// mounts its rows: the MCP client then declares it when it first connects, and does not
// reconnect to do so when the agent mounts (which would end a stdio server's tasks).
func offerAgent(t *testing.T, root *ctx.Context) {
	t.Helper()
	if _, err := sampling.Offer(root, "host"); err != nil {
		t.Fatal(err)
	}
}

// researchRoot returns a root for an agent calling the research tool: its elicitation
// responder (returned, to read what it was asked) answers the tool's clarifying question
// ("snake") and declines any other, and the agent's features are offered (offerAgent).
func researchRoot(t *testing.T) (*ctx.Context, *elicittest.Recorder) {
	t.Helper()
	root := ctxtest.New(t)
	r := answering([]elicitation.Mode{elicitation.ModeForm}, func(req *elicitation.Request) *elicitation.Response {
		if hasField(req, "interpretation") {
			return &elicitation.Response{Action: elicitation.Accept, Content: map[string]any{"interpretation": "snake"}}
		}
		return &elicitation.Response{Action: elicitation.Decline}
	})
	if _, err := elicitation.Provide(root, "test", r); err != nil {
		t.Fatal(err)
	}
	offerAgent(t, root)
	return root, r
}

// agentOn mounts the agent on root (an env's, with its MCP client) with a model that
// answers as reply does; sessions are stored in a temporary directory.
func agentOn(t *testing.T, root *ctx.Context, reply func(*modeltest.Call) modeltest.Reply) *agent.Service {
	t.Helper()
	srv := modeltest.New(t, modeltest.Options{Reply: reply})
	chat, err := openaicompat.NewChat(openaicompat.ChatConfig{Name: "flash", BaseURL: srv.URL, APIKey: srv.Key, Provider: openaicompat.ProviderDeepSeek})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := model.Key.Provide(root, model.NewService(map[string]model.Model{"flash": chat}, "")); err != nil {
		t.Fatal(err)
	}
	ctxtest.MountActive(t, root, agent.Plugin, map[string]any{"sessionsDir": t.TempDir(), "permissions": map[string]any{"default": "allow"}})
	ctxtest.Settle(t, root)
	svc, ok := agent.Key.Get(root)
	if !ok {
		t.Fatal("no agent service")
	}
	return svc
}

// TestAgentTurnWithTask: an agent turn whose model calls server-everything's
// simulate-research-query (a tool that requires a task) waits for the task like a long
// call: the task's clarifying question reaches the responder with the session's and the
// call's origin, the task's statuses are the call's progress events in the session's log,
// and the report returns to the model as the tool's result.
func TestAgentTurnWithTask(t *testing.T) {
	srv := locate(t)
	root, r := researchRoot(t)
	mountOn(t, root, stdioConfig(srv))
	svc := agentOn(t, root, scriptedModel(public(researchTool), `{"topic": "python", "ambiguous": true}`))
	sess, err := svc.Start(agent.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sess.Close() }()
	end, err := sess.Send(ctxtest.Wait(t), "Research python for me.")
	if err != nil {
		t.Fatal(err)
	}
	if end.Reason != session.StopDone || end.Text != "The tool said: # Research Report: python (snake)" {
		t.Fatalf("the turn ended %s with %q", end.Reason, end.Text)
	}
	var asked *elicitation.Request
	for _, q := range r.Requests() {
		if hasField(q, "interpretation") {
			asked = q
		}
	}
	if asked == nil {
		t.Fatal("the clarifying question never reached the responder")
	}
	if o, ok := elicitation.OriginOf(asked.Call); !ok || o.Session != sess.ID() || o.Call != "call_research" {
		t.Errorf("the question's origin %+v (%v), want session %s, call call_research", o, ok, sess.ID())
	}
	// The log (what a resumed session, the page and the terminal read) has the task's
	// statuses as the call's progress, each once, before its result.
	var progress []string
	for _, ev := range readLog(t, svc, sess.ID()) {
		switch ev.Type {
		case session.EventToolProgress:
			if ev.Call == nil || ev.Call.ID != "call_research" || ev.Progress == nil {
				t.Fatalf("a progress event %+v", ev)
			}
			progress = append(progress, ev.Progress.Message)
		case session.EventToolResult:
			if len(progress) == 0 {
				t.Fatal("the call's result came before any progress")
			}
		}
	}
	if !containsPrefix(progress, "task working: Gathering sources") || !containsPrefix(progress, "task input_required: ") {
		t.Errorf("the call's progress in the log: %q", progress)
	}
	for i := 1; i < len(progress); i++ {
		if progress[i] == progress[i-1] {
			t.Errorf("progress %q logged twice in a row", progress[i])
		}
	}
}

// readLog reads session id's log from the agent's store.
func readLog(t *testing.T, svc *agent.Service, id string) []session.Event {
	t.Helper()
	events, err := svc.Store().Read(id)
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// backgroundModel answers as a model would that is told a call went to the background: in
// the turn "research go" it calls the research tool, and when told the call goes on as a
// task, waits for it with task_result and quotes the report; in the turn "research python
// later" it calls the tool (an ambiguous query) and leaves the task in the background.
func backgroundModel(c *modeltest.Call) modeltest.Reply {
	var user string
	var tools []modeltest.Message
	for _, m := range c.Messages {
		switch m.Role {
		case "user":
			user, tools = m.Content, nil
		case "tool":
			tools = append(tools, m)
		}
	}
	later := strings.Contains(user, "later")
	if len(tools) == 0 {
		args := `{"topic": "go"}`
		if later {
			args = `{"topic": "python", "ambiguous": true}`
		}
		return modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: public(researchTool), Arguments: args}}}
	}
	last := tools[len(tools)-1].Content
	if m := backgroundNote.FindStringSubmatch(last); m != nil {
		if later {
			return modeltest.Reply{Content: "It goes on in the background as " + m[1] + "."}
		}
		return modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "task_result", Arguments: `{"id": "` + m[1] + `"}`}}}
	}
	first, _, _ := strings.Cut(last, "\n")
	return modeltest.Reply{Content: "The tool said: " + first}
}

var backgroundNote = regexp.MustCompile(`in the background as task (\S+) of`)

// TestAgentBackgroundTask: a task that outlives its call's wait (maxToolCallMs) goes on in
// the background: the model is told so, the log records it (task.background), the model
// fetches its result with task_result in the same turn; a second one left in the
// background is listed by the chat's /tasks with its status, and /tasks ID waits for its
// result (its clarifying question answered meanwhile) and prints the report.
func TestAgentBackgroundTask(t *testing.T) {
	srv := locate(t)
	root, r := researchRoot(t)
	cfg := stdioConfig(srv)
	cfg.ToolCallTimeoutMs, cfg.MaxToolCallMs = 1000, 1500 // the research takes 4 s
	mountOn(t, root, cfg)
	svc := agentOn(t, root, backgroundModel)

	in, typed := io.Pipe()
	out := &shownText{changed: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		// The chat lasts for the test, each step bounded by its await: its two researches
		// alone take 8 s of the server's stages (and up to 1 s more each for its tasks/result
		// poll), too close to ctxtest.Timeout for the whole chat.
		done <- termchat.Run(t.Context(), termchat.Options{Caller: remote.NewLocal(root), In: in, Out: out})
	}()
	typeLine := func(line string) {
		t.Helper()
		if _, err := io.WriteString(typed, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	typeLine("research go")
	out.await(t, "The tool said: # Research Report: go")
	typeLine("research python later")
	shown := out.await(t, "It goes on in the background as ")
	m := regexp.MustCompile(`It goes on in the background as (\S+)\.`).FindStringSubmatch(shown)
	later := m[1]
	if !strings.Contains(shown, "simulate-research-query goes on in the background as task "+later+" (/tasks "+later+" waits for it)") {
		t.Errorf("the chat did not say the call went to the background:\n%s", shown)
	}
	typeLine("/tasks")
	listing := out.await(t, "/tasks ID waits for a task's result")
	typeLine("/tasks " + later)
	out.await(t, "# Research Report: python (snake)")
	typeLine("/exit")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	_ = typed.Close()

	// The listing: both tasks, the first read, the second still running.
	listing = listing[len(shown):]
	lines := strings.Split(listing, "\n")
	var first, second string
	for _, l := range lines {
		switch {
		case strings.Contains(l, later):
			second = l
		case strings.Contains(l, researchTool):
			first = l
		}
	}
	if !strings.Contains(first, "completed") || !strings.Contains(first, "(result read)") {
		t.Errorf("/tasks lists the fetched task as %q; it showed:\n%s", first, listing)
	}
	if !strings.Contains(second, public(researchTool)) || !strings.Contains(second, "on everything") ||
		!(strings.Contains(second, "working") || strings.Contains(second, "input_required")) || strings.Contains(second, "(result read)") {
		t.Errorf("/tasks lists the running task as %q", second)
	}
	if !slices.ContainsFunc(r.Requests(), func(q *elicitation.Request) bool { return hasField(q, "interpretation") }) {
		t.Error("the second task's clarifying question was never asked")
	}

	// The log: each call's task recorded as it went to the background, the call's result
	// saying so, task_result's the report.
	id, err := svc.Store().Resolve(session.Last)
	if err != nil {
		t.Fatal(err)
	}
	var background []session.TaskInfo
	var results []string
	for _, ev := range readLog(t, svc, id) {
		switch ev.Type {
		case session.EventTaskBackground:
			if ev.Call == nil || ev.Task == nil || ev.Task.Server != serverName || ev.Task.Tool != public(researchTool) {
				t.Fatalf("a task.background event %+v", ev)
			}
			background = append(background, *ev.Task)
		case session.EventToolResult:
			results = append(results, ev.Call.Tool+": "+ev.Message.Content)
		}
	}
	if len(background) != 2 || background[1].ID != later {
		t.Fatalf("the log's background tasks %+v, want 2, the second %s", background, later)
	}
	if len(results) != 3 || !strings.Contains(results[0], "in the background as task "+background[0].ID) ||
		!strings.HasPrefix(results[1], "task_result: # Research Report: go") || !strings.Contains(results[2], "in the background as task "+later) {
		t.Errorf("the calls' results in the log:\n%s", strings.Join(results, "\n"))
	}
}

// shownText is what a chat showed, with a way to wait for a line. It is safe for
// concurrent use.
type shownText struct {
	mu      sync.Mutex
	b       strings.Builder
	changed chan struct{} // closed and replaced at each write
}

func (s *shownText) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Write(p)
	close(s.changed)
	s.changed = make(chan struct{})
	return len(p), nil
}

// await waits (at most 30 s) until the text shown since the last await contains want, and
// returns that text.
func (s *shownText) await(t *testing.T, want string) string {
	t.Helper()
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	for {
		s.mu.Lock()
		text, changed := s.b.String(), s.changed
		s.mu.Unlock()
		if strings.Contains(text, want) {
			return text
		}
		select {
		case <-changed:
		case <-timeout.C:
			t.Fatalf("the chat did not show %q within 30 s; it showed:\n%s", want, text)
		}
	}
}

// TestAgentTurnSentToBackground: a person who stops waiting for a turn (Session.Background,
// agent/background) ends it as a cancel does, but the task its call runs goes on in the
// background instead of being cancelled: the log records it, the session lists it, and its
// result can be waited for later.
func TestAgentTurnSentToBackground(t *testing.T) {
	srv := locate(t)
	root := ctxtest.New(t)
	offerAgent(t, root)
	mountOn(t, root, stdioConfig(srv))
	svc := agentOn(t, root, scriptedModel(public(researchTool), `{"topic": "rust"}`))
	sess, err := svc.Start(agent.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sess.Close() }()
	sub := sess.Subscribe(0)
	defer sub.Close()
	wcx := ctxtest.Wait(t)
	go func() {
		for {
			ev, err := sub.Next(wcx)
			if err != nil {
				return
			}
			if ev.Type == session.EventToolProgress && strings.HasPrefix(ev.Progress.Message, "task working") {
				sess.Background() // the person stops waiting once the task runs
				return
			}
		}
	}()
	end, err := sess.Send(ctxtest.Wait(t), "Research rust.")
	if end == nil || end.Reason != session.StopCancelled || !errors.Is(err, agent.ErrCancelled) || !errors.Is(err, toolregistry.ErrStopWaiting) {
		t.Fatalf("the turn ended %+v, %v; want cancelled, stopped waiting", end, err)
	}
	var kept *session.TaskInfo
	for _, ev := range readLog(t, svc, sess.ID()) {
		if ev.Type == session.EventTaskBackground {
			kept = ev.Task
		}
	}
	if kept == nil {
		t.Fatal("no task.background in the log")
	}
	tasks := sess.BackgroundTasks(ctxtest.Wait(t))
	if len(tasks) != 1 || tasks[0].ID != kept.ID || tasks[0].Status != "working" {
		t.Fatalf("the background tasks %+v, want %s working", tasks, kept.ID)
	}
	res, err := sess.TaskResult(ctxtest.Wait(t), kept.ID)
	if err != nil || !strings.HasPrefix(res.Text(), "# Research Report: rust") {
		t.Fatalf("the task's result %v, %v", res, err)
	}
}
