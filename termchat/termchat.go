// Package termchat is the terminal chat with an agent (harness chat): each line typed is a
// message, the model's answer streams as it arrives, its reasoning dimmed, each tool call
// is one line with its outcome and time, approvals are asked on the terminal, and slash
// commands switch sessions and models. It drives the agent through package turn, so the
// same chat talks with the agent of a running host (a *remote.Client) or of a tree in this
// process (a *remote.Local).
//
// # Concurrency
//
// [Run] owns its input and output until it returns. Without a keyboard it starts one
// goroutine that reads lines from [Options.In], which ends when the input does or when Run's
// context ends; with one (a terminal) it reads only while it asks a question.
// [Options.OnInterrupt]'s handler may be called from any goroutine.
package termchat

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/hostview"
	"github.com/cordisgo/harness/internal/suggest"
	"github.com/cordisgo/harness/internal/termsafe"
	"github.com/cordisgo/harness/internal/words"
	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/agent"
	"github.com/cordisgo/harness/plugins/agent/agentapi"
	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/remote"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/termform"
	"github.com/cordisgo/harness/turn"
)

// Options configure a chat.
type Options struct {
	// Caller reaches the agent's methods (agent/*) and the host's tools (harness/tools).
	Caller remote.Caller
	// In is what the person types, a message per line; Out is where the chat is shown.
	In  io.Reader
	Out io.Writer
	// Styled marks Out as a terminal: reasoning and notes are dimmed with ANSI styles.
	Styled bool
	// Agent, Model and Mode are the session's agent, model and mode ("": the defaults).
	Agent, Model, Mode string
	// Resume opens this stored session (or session.Last) instead of starting one.
	Resume string
	// HideReasoning hides the model's reasoning (/reasoning shows it again).
	HideReasoning bool
	// Where is said in the banner after the session, such as " · on the host (pid 42)".
	Where string
	// Models lists the models /model offers (in process: the profile's model service); nil
	// says the host's models are the host's business.
	Models func() []model.Info
	// CheckModel warns about a session's model that cannot answer (no key); nil: none.
	CheckModel func(name string) error
	// OnInterrupt, if set, installs the handler of an interrupt (SIGINT) while a turn runs
	// and returns the function that removes it: the handler cancels the turn and reports
	// whether it took the interrupt.
	OnInterrupt func(handler func() bool) (remove func())
	// ResumeError words the error of the first Resume (a did-you-mean, say); nil: as is.
	ResumeError func(id string, err error) error
	// Keyboard, on a terminal, is its one reader (termform.Keyboard), shared with servers'
	// forms: the prompt and the approval questions read through it, nothing is read ahead,
	// and Ctrl-C is a key there. Nil reads In line by line.
	Keyboard Keyboard
	// Page, on a terminal, shows an approval's preview longer than the screen through the
	// pager (termui.Page) and reports whether it did; nil, or false, prints it.
	Page func(cx context.Context, text string) (bool, error)
}

// Keyboard reads the answers typed on a terminal (termform.Keyboard): ReadLine one line for
// a question, ReadMessage a message at the prompt (edited, with history, several lines, a
// paste kept whole). Ctrl-C ends either with termform.ErrInterrupted, Ctrl-D on an empty
// line with io.EOF.
type Keyboard interface {
	ReadLine(cx context.Context, out io.Writer, prompt string) (string, error)
	ReadMessage(cx context.Context, out io.Writer, prompt string) (string, error)
}

// Commands are the slash commands /help lists, with their arguments (/quit and /help
// work too).
var Commands = []string{"/tools", "/model [NAME]", "/retry", "/cost", "/reasoning", "/compact [FOCUS]", "/tasks [ID]", "/clear", "/resume ID|last", "/exit"}

// commandHelp says what each of [Commands] does, in its order.
var commandHelp = []string{
	"the tools the agent sees",
	"the models of the profile, or switch the conversation to NAME",
	"send the last message again (after a cut stream or an error)",
	"the session's tokens and cost, and the model's price",
	"show or hide the model's reasoning",
	"summarize the conversation so far to free the context (FOCUS: what to keep)",
	"the calls still running in the background, or wait for task ID's result",
	"start a new session",
	"continue a stored session (harness sessions list), or the latest",
	"leave (Ctrl-D too)",
}

// CommandsHelp is the list of the chat's commands with what each does, one per line,
// indented by two spaces: what /help prints and harness chat --help shows.
func CommandsHelp() string {
	var b strings.Builder
	for i, c := range Commands {
		fmt.Fprintf(&b, "  %-18s%s\n", c, commandHelp[i])
	}
	return b.String()
}

// chat is one harness chat: the session in use and how it is shown.
type chat struct {
	o         Options
	io        *lineIO
	s         *turn.Session
	reasoning bool
	// views are the tools that have an interactive view (hostview.HasView), by name, as
	// the host listed them last (nil: not listed yet).
	views map[string]bool
	// total sums the usage of the session in use: its log's when it was opened, then each
	// request of its agent and each subagent's run (session.UsageTotal.AddEvent).
	total session.UsageTotal

	// The approvals decided elsewhere (a page, another terminal following the session):
	// the question asked here about one ends (ending), or is never asked (answered).
	mu       sync.Mutex
	ending   map[string]context.CancelFunc
	answered map[string]bool
}

// decided is told (turn.Session.OnDecided) that approval id was answered: a question
// about it ends, or is not asked.
func (ch *chat) decided(id string) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if end, ok := ch.ending[id]; ok {
		end()
		return
	}
	if ch.answered == nil {
		ch.answered = map[string]bool{}
	}
	ch.answered[id] = true
}

// asking returns a context for the question about approval id that ends when someone
// else answers it, and whether someone already did; done forgets it.
func (ch *chat) asking(cx context.Context, id string) (qcx context.Context, already bool, done func()) {
	qcx, cancel := context.WithCancel(cx)
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.answered[id] {
		delete(ch.answered, id)
		cancel()
		return qcx, true, func() {}
	}
	if ch.ending == nil {
		ch.ending = map[string]context.CancelFunc{}
	}
	ch.ending[id] = cancel
	return qcx, false, func() {
		ch.mu.Lock()
		delete(ch.ending, id)
		delete(ch.answered, id)
		ch.mu.Unlock()
		cancel()
	}
}

// readLine asks a question and reads the answer: through the keyboard on a terminal, else
// the next line of the input. ok is false when the input ended (Ctrl-D) or cx did;
// interrupted is set for Ctrl-C.
func (ch *chat) readLine(cx context.Context, prompt string, message bool) (line string, ok, interrupted bool) {
	if kb := ch.o.Keyboard; kb != nil {
		read := kb.ReadLine
		if message {
			read = kb.ReadMessage
		}
		line, err := read(cx, ch.io.out, prompt)
		switch {
		case errors.Is(err, termform.ErrInterrupted):
			return line, true, true
		case err != nil:
			return "", false, false
		}
		return line, true, false
	}
	ch.io.printf("%s", prompt)
	select {
	case line, ok = <-ch.io.lines:
		return line, ok, false
	case <-cx.Done():
		return "", false, false
	}
}

// lineIO is the chat's terminal: lines typed by the person (read by one goroutine, so
// that an approval asked during a turn and the next message share the input), and the
// output.
type lineIO struct {
	lines  chan string // closed at the end of the input
	out    io.Writer
	styled bool
	mu     sync.Mutex
}

func (t *lineIO) printf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.out, format, args...)
}

// dim writes s dimmed (on a terminal).
func (t *lineIO) dim(s string) string {
	if !t.styled || s == "" {
		return s
	}
	return "\x1b[2m" + s + "\x1b[0m"
}

// readLines reads in line by line into the returned channel, closed at the end of in or
// when cx ends.
func readLines(cx context.Context, in io.Reader) chan string {
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-cx.Done():
				return
			}
		}
	}()
	return lines
}

// Run runs the chat until the input ends, /exit or cx's end. The error is that of the
// session's start (or first resume): the chat itself reports every later failure on Out
// and goes on.
func Run(cx context.Context, o Options) error {
	ch := &chat{o: o, reasoning: !o.HideReasoning}
	ch.io = &lineIO{out: o.Out, styled: o.Styled}
	if o.Keyboard == nil {
		ch.io.lines = readLines(cx, o.In)
	}
	if o.Resume != "" {
		if err := ch.resume(cx, o.Resume); err != nil {
			if o.ResumeError != nil {
				return o.ResumeError(o.Resume, err)
			}
			return err
		}
	} else if err := ch.start(cx); err != nil {
		return err
	}
	defer ch.close(cx)
	return ch.loop(cx)
}

func (ch *chat) start(cx context.Context) error {
	s, err := turn.Start(cx, ch.o.Caller, agentapi.StartParams{Agent: ch.o.Agent, Model: ch.o.Model, Mode: ch.o.Mode})
	if err != nil {
		return err
	}
	ch.use(cx, s)
	return nil
}

func (ch *chat) resume(cx context.Context, id string) error {
	s, err := turn.Open(cx, ch.o.Caller, agentapi.OpenParams{Session: id, Model: ch.o.Model, Mode: ch.o.Mode})
	if err != nil {
		return err
	}
	ch.use(cx, s)
	info := s.Info()
	note := fmt.Sprintf("resumed: %d turn%s", info.Turns, words.Plural(info.Turns))
	if info.ResumedUnder != "" && info.Profile != "" {
		note += fmt.Sprintf(" · made under profile %s, now resumed under %s", termsafe.String(info.Profile), termsafe.String(info.ResumedUnder))
	}
	ch.io.printf("%s\n", ch.io.dim(note))
	return nil
}

// use makes s the session in use, closing the one before.
func (ch *chat) use(cx context.Context, s *turn.Session) {
	ch.close(cx)
	ch.s = s
	// Approval IDs are the agent session's: a resumed one counts them again.
	ch.mu.Lock()
	ch.ending, ch.answered = nil, nil
	ch.mu.Unlock()
	s.OnDecided(ch.decided)
	info := s.Info()
	ch.total = info.Usage
	who := "the main agent"
	if info.Agent != "" {
		who = "agent " + info.Agent
	}
	mode := ""
	if info.Mode == agent.ModePTC {
		mode = " · PTC mode (the model writes programs that call the tools)"
	}
	ch.io.printf("%s\n", ch.io.dim(fmt.Sprintf("harness chat · %s · model %s · session %s%s%s — /help for commands, Ctrl-C cancels a turn, Ctrl-D leaves",
		who, termsafe.String(info.Model), info.ID, mode, ch.o.Where)))
	if ch.o.CheckModel != nil {
		if err := ch.o.CheckModel(info.Model); err != nil {
			ch.io.printf("%s\n", termsafe.String("warning: "+err.Error()+" (/model switches models)"))
		}
	}
}

// close closes the session in use, if any.
func (ch *chat) close(cx context.Context) {
	if ch.s != nil {
		_ = ch.s.Close(cx)
		ch.s = nil
	}
}

// loop reads messages until the end of the input, /exit or cx's end.
func (ch *chat) loop(cx context.Context) error {
	for {
		line, ok, interrupted := ch.readLine(cx, "> ", true)
		switch {
		case interrupted && strings.TrimSpace(line) == "":
			return nil // Ctrl-C at an empty prompt leaves
		case interrupted:
			continue // Ctrl-C drops the line typed
		case !ok:
			if ch.o.Keyboard == nil || cx.Err() != nil {
				ch.io.printf("\n")
			}
			return nil
		}
		line = strings.TrimSpace(line)
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, "/"):
			if ch.command(cx, line) {
				return nil
			}
			continue
		}
		ch.turn(cx, line)
	}
}

// command runs a slash command; it reports whether the chat ends.
func (ch *chat) command(cx context.Context, line string) (done bool) {
	name, arg, _ := strings.Cut(strings.TrimPrefix(line, "/"), " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case "exit", "quit":
		return true
	case "help":
		ch.io.printf("%s", CommandsHelp())
	case "reasoning":
		ch.reasoning = !ch.reasoning
		ch.io.printf("reasoning %s\n", map[bool]string{true: "shown", false: "hidden"}[ch.reasoning])
	case "clear":
		if err := ch.start(cx); err != nil {
			ch.io.printf("%s\n", termsafe.String(err.Error()))
		}
	case "resume":
		if arg == "" {
			ch.io.printf("usage: /resume ID (harness sessions list shows them)\n")
			break
		}
		if err := ch.resume(cx, arg); err != nil {
			ch.io.printf("%s\n", termsafe.String(err.Error()))
		}
	case "compact":
		ch.compact(cx, arg)
	case "model":
		ch.model(cx, arg)
	case "tools":
		ch.tools(cx)
	case "tasks":
		ch.tasks(cx, arg)
	case "cost":
		ch.cost()
	case "retry":
		if ch.s.Info().Turns == 0 {
			ch.io.printf("nothing to retry yet: /retry sends the last message again\n")
			break
		}
		ch.run(cx, func(fn func(session.Event)) (*session.TurnEnd, error) { return ch.s.Retry(cx, 0, fn) })
	default:
		known := []string{"/quit", "/help"}
		for _, c := range Commands {
			known = append(known, strings.Fields(c)[0])
		}
		hint := suggest.Phrase(suggest.Closest("/"+name, known, suggest.Options{Max: 1}))
		if hint != "" {
			hint = " (" + hint + ")"
		}
		ch.io.printf("unknown command /%s%s (/help lists them)\n", termsafe.String(name), hint)
	}
	return false
}

// tasks lists the session's calls whose work went on in the background (no id), or waits
// for the result of the one called id and prints it (Ctrl-C stops waiting; the task goes on).
func (ch *chat) tasks(cx context.Context, id string) {
	if id == "" {
		ts, err := ch.s.Tasks(cx)
		if err != nil {
			ch.io.printf("%s\n", termsafe.String(err.Error()))
			return
		}
		if len(ts) == 0 {
			ch.io.printf("no background tasks: a call that outlives its wait goes on as one\n")
			return
		}
		for _, t := range ts {
			status := t.Status
			if t.Message != "" {
				status += ": " + t.Message
			}
			if t.Fetched {
				status += " (result read)"
			}
			ch.io.printf("%s  %s on %s  %s  %s\n", termsafe.String(t.ID), termsafe.String(t.Tool), termsafe.String(t.Server),
				t.Since.Local().Format("15:04:05"), termsafe.String(status))
		}
		ch.io.printf("%s\n", ch.io.dim("/tasks ID waits for a task's result"))
		return
	}
	wcx, stop := context.WithCancel(cx)
	defer stop()
	if ch.o.OnInterrupt != nil {
		remove := ch.o.OnInterrupt(func() bool { stop(); return true })
		defer remove()
	}
	ch.io.printf("%s\n", ch.io.dim("waiting for task "+termsafe.String(id)+"… (Ctrl-C stops waiting; the task goes on)"))
	r, err := ch.s.TaskResult(wcx, id)
	if err != nil {
		ch.io.printf("%s\n", termsafe.String(err.Error()))
		return
	}
	if r.IsError {
		ch.io.printf("the task failed:\n")
	}
	ch.io.printf("%s\n", termsafe.String(r.Text))
}

// model lists the models (no name), or switches the conversation to the model called
// name: the session is closed and opened again with that model, its history kept; a
// session not stored yet (no message sent) is started anew with it.
func (ch *chat) model(cx context.Context, name string) {
	info := ch.s.Info()
	if name == "" {
		if ch.o.Models == nil {
			ch.io.printf("* %s (the host's models: harness profile show on the host's profile)\n", termsafe.String(info.Model))
			return
		}
		for _, m := range ch.o.Models() {
			mark := " "
			if m.Name == info.Model {
				mark = "*"
			}
			ch.io.printf("%s %s (%s %s)\n", mark, m.Name, m.Provider, m.ID)
		}
		return
	}
	var s *turn.Session
	var err error
	if info.Turns > 0 {
		ch.close(cx)
		s, err = turn.Open(cx, ch.o.Caller, agentapi.OpenParams{Session: info.ID, Model: name, Mode: ch.o.Mode})
		if err != nil { // the model was refused: the conversation goes on with its own
			ch.io.printf("%s\n", termsafe.String(err.Error()))
			if s, err = turn.Open(cx, ch.o.Caller, agentapi.OpenParams{Session: info.ID, Model: info.Model, Mode: ch.o.Mode}); err != nil {
				ch.io.printf("%s\n", termsafe.String(err.Error()))
				return
			}
			ch.use(cx, s)
			return
		}
	} else if s, err = turn.Start(cx, ch.o.Caller, agentapi.StartParams{Agent: ch.o.Agent, Model: name, Mode: ch.o.Mode}); err != nil {
		ch.io.printf("%s\n", termsafe.String(err.Error()))
		return
	}
	ch.o.Model = name
	ch.use(cx, s)
}

// compact summarises the conversation now; an interrupt cancels it.
func (ch *chat) compact(cx context.Context, focus string) {
	s := ch.s
	if ch.o.OnInterrupt != nil {
		remove := ch.o.OnInterrupt(func() bool { return s.Cancel(cx) == nil })
		defer remove()
	}
	ch.io.printf("%s\n", ch.io.dim("compacting the conversation…"))
	c, err := s.Compact(cx, focus)
	if err != nil {
		ch.io.printf("%s\n", termsafe.String("compact: "+err.Error()))
		return
	}
	ch.io.printf("%s\n", ch.io.dim(compactionNote(c)))
}

// compactionNote is the line that marks a compaction in the conversation.
func compactionNote(c *session.Compaction) string {
	what := fmt.Sprintf("%d old tool results pruned", len(c.Pruned))
	if c.Summary != "" {
		what = fmt.Sprintf("%d messages summarised", c.Summarized)
	}
	trigger := c.Trigger
	if c.Focus != "" {
		trigger += ": " + termsafe.String(c.Focus)
	}
	return fmt.Sprintf("── conversation compacted (%s) · %s · about %d → %d tokens ──", trigger, what, c.TokensBefore, c.TokensAfter)
}

// cost shows the session's tokens and cost, and the model's price when it is known.
func (ch *chat) cost() {
	t := ch.total
	line := fmt.Sprintf("session: %d request%s · %d prompt tokens (%d cached, %d missed) · %d completion tokens",
		t.Requests, words.Plural(t.Requests), t.PromptTokens, t.CacheHitTokens, t.PromptTokens-t.CacheHitTokens, t.CompletionTokens)
	name := ch.s.Info().Model
	var price *model.Price
	if ch.o.Models != nil {
		for _, m := range ch.o.Models() {
			if m.Name == name {
				price = m.Price
			}
		}
	}
	if price != nil || t.Cost > 0 {
		line += " · " + model.FormatCost(t.Cost)
	}
	ch.io.printf("%s\n", line)
	if price != nil {
		ch.io.printf("%s\n", ch.io.dim(fmt.Sprintf("model %s: $%g per million input tokens on a cache hit, $%g on a miss, $%g per million output tokens",
			termsafe.String(name), price.InputCacheHit, price.InputCacheMiss, price.Output)))
	}
}

// tools lists the tools the agent's host sees at its root (host.MethodTools).
func (ch *chat) tools(cx context.Context) {
	cx, cancel := context.WithTimeout(cx, turn.AnswerTimeout)
	defer cancel()
	tools, err := host.MethodTools.Call(cx, ch.o.Caller, struct{}{})
	if err != nil {
		ch.io.printf("%s\n", termsafe.String(err.Error()))
		return
	}
	ch.noteViews(tools)
	views := false
	for _, t := range tools {
		desc, _, _ := strings.Cut(t.Description, "\n")
		if hostview.HasView(t) {
			desc, views = hostview.ViewMark+desc, true
		}
		ch.io.printf("%-40s %s\n", termsafe.String(t.Name), ch.io.dim(termsafe.String(desc)))
	}
	if views {
		ch.io.printf("%s\n", ch.io.dim(hostview.ViewNote))
	}
}

// noteViews remembers which of tools have an interactive view.
func (ch *chat) noteViews(tools []toolregistry.Info) {
	ch.views = map[string]bool{}
	for _, t := range tools {
		ch.views[t.Name] = hostview.HasView(t)
	}
}

// hasView reports whether the tool name has an interactive view, listing the host's tools
// when it does not know the name yet (once per turn: v.listed).
func (ch *chat) hasView(cx context.Context, v *view, name string) bool {
	if has, ok := ch.views[name]; ok || v.listed {
		return has
	}
	v.listed = true
	cx, cancel := context.WithTimeout(cx, turn.AnswerTimeout)
	defer cancel()
	if tools, err := host.MethodTools.Call(cx, ch.o.Caller, struct{}{}); err == nil {
		ch.noteViews(tools)
	}
	return ch.views[name]
}

// turn sends text and shows the turn as it happens; an interrupt cancels it.
func (ch *chat) turn(cx context.Context, text string) {
	ch.run(cx, func(fn func(session.Event)) (*session.TurnEnd, error) { return ch.s.Run(cx, text, 0, fn) })
}

// run runs a turn (a message sent, or the last one again) and shows it as it happens; an
// interrupt cancels it.
func (ch *chat) run(cx context.Context, turn func(func(session.Event)) (*session.TurnEnd, error)) {
	s := ch.s
	if ch.o.OnInterrupt != nil {
		remove := ch.o.OnInterrupt(func() bool { return s.Cancel(cx) == nil })
		defer remove()
	}
	v := &view{ch: ch}
	end, err := turn(func(ev session.Event) { v.show(cx, ev) })
	v.endLine()
	switch {
	case errors.Is(err, agent.ErrCancelled):
		ch.io.printf("\n%s\n", ch.io.dim("(cancelled)"))
	case err != nil && cx.Err() == nil && (end == nil || !v.shownErr): // an error event shows it once
		ch.io.printf("\n%s\n", termsafe.String("error: "+err.Error()))
	}
}

// view shows the events of one turn: the answer streamed, reasoning dimmed, a line per
// tool call, approvals asked on the terminal.
type view struct {
	ch                   *chat
	inReasoning, midLine bool
	shownErr             bool // an error of the turn was shown
	listed               bool // the host's tools were listed during the turn (hasView)
	// asked and waited time the approvals of the turn's calls (by call id): a tool's line
	// shows its own time and the wait for the person apart.
	asked  map[string]time.Time
	waited map[string]time.Duration
}

// endReasoning ends the dimmed reasoning: the style starts with its first piece and ends
// with it, so the pieces between are plain text.
func (v *view) endReasoning() {
	if v.inReasoning && v.ch.io.styled {
		v.ch.io.printf("\x1b[0m")
	}
	v.inReasoning = false
}

func (v *view) endLine() {
	v.endReasoning()
	if v.midLine {
		v.ch.io.printf("\n")
		v.midLine = false
	}
}

func (v *view) show(cx context.Context, ev session.Event) {
	io := v.ch.io
	who := ""
	if ev.Agent != "" {
		who = ev.Agent + ": "
	}
	switch ev.Type {
	case session.EventReasoningDelta:
		if !v.ch.reasoning || ev.Agent != "" {
			return
		}
		if !v.inReasoning && io.styled {
			io.printf("\x1b[2m")
		}
		v.inReasoning, v.midLine = true, true
		io.printf("%s", termsafe.String(ev.Text))
	case session.EventTextDelta:
		if ev.Agent != "" {
			return
		}
		if v.inReasoning {
			v.endReasoning()
			io.printf("\n")
		}
		v.midLine = !strings.HasSuffix(ev.Text, "\n")
		io.printf("%s", termsafe.String(ev.Text))
	case session.EventRetry:
		v.endLine()
		io.printf("%s\n", io.dim("retrying: "+termsafe.String(ev.Error)))
	case session.EventToolProgress:
		// A running call's progress message or its task's status, as it changes.
		if ev.Call == nil || ev.Progress == nil {
			return
		}
		v.endLine()
		io.printf("  %s%s %s\n", who, termsafe.String(ev.Call.Tool), io.dim(termsafe.String(ev.Progress.Message)))
	case session.EventTaskBackground:
		if ev.Task == nil {
			return
		}
		v.endLine()
		io.printf("  %s%s %s\n", who, termsafe.String(ev.Task.Tool), io.dim("goes on in the background as task "+termsafe.String(ev.Task.ID)+" (/tasks "+termsafe.String(ev.Task.ID)+" waits for it)"))
	case session.EventToolResult:
		if ev.Call == nil || ev.Result == nil {
			return
		}
		v.endLine()
		took := time.Duration(ev.Result.Duration) * time.Millisecond
		times := took.String()
		if w := v.waited[ev.Call.ID]; w > 0 { // the call's time includes the wait for the person
			times = fmt.Sprintf("%s · %s waiting for approval", max(took-w, 0).Round(time.Millisecond), w.Round(time.Millisecond))
		}
		note := "(" + times + ")"
		if v.ch.hasView(cx, v, ev.Call.Tool) {
			note += " · its interactive view is in the page's Chat view (harness open)"
		}
		io.printf("  %s%s %s %s\n", who, termsafe.String(ev.Call.Tool), outcomeWord(ev.Result.Outcome), io.dim(note))
	case session.EventApprovalAsked:
		v.endLine()
		if ev.Approval != nil && ev.Approval.CallID != "" {
			if v.asked == nil {
				v.asked, v.waited = map[string]time.Time{}, map[string]time.Duration{}
			}
			v.asked[ev.Approval.CallID] = ev.Time
		}
		v.ch.approve(cx, ev)
	case session.EventApprovalDecided:
		if ap := ev.Approval; ap != nil {
			if at, ok := v.asked[ap.CallID]; ok {
				v.waited[ap.CallID] = ev.Time.Sub(at)
			}
		}
	case session.EventCompacting:
		if ev.Agent == "" {
			v.endLine()
			io.printf("%s\n", io.dim("compacting the conversation…"))
		}
	case session.EventCompaction:
		if ev.Agent == "" && ev.Compaction != nil {
			v.endLine()
			io.printf("%s\n", io.dim(compactionNote(ev.Compaction)))
		}
	case session.EventError:
		v.endLine()
		io.printf("%s\n", termsafe.String("error: "+ev.Error))
		v.shownErr = v.shownErr || ev.Agent == ""
	case session.EventUsage:
		v.ch.total.AddEvent(ev)
	case session.EventTurnEnd:
		v.endLine()
		if e := ev.End; e != nil && ev.Agent == "" {
			note := fmt.Sprintf("%d step%s · %d prompt tokens (%d cached) · %d completion tokens",
				e.Steps, words.Plural(e.Steps), e.Usage.PromptTokens, e.Usage.CacheHitTokens, e.Usage.CompletionTokens)
			if e.Usage.Cost > 0 {
				note += fmt.Sprintf(" · %s (session %s)", model.FormatCost(e.Usage.Cost), model.FormatCost(v.ch.total.Cost))
			}
			if e.Reason != session.StopDone {
				note = string(e.Reason) + " · " + note
			}
			io.printf("%s\n", io.dim(note))
			if e.Reason == session.StopIncomplete {
				io.printf("%s\n", io.dim("(the answer was cut: /retry runs the message again)"))
			}
		}
	}
}

func outcomeWord(o string) string {
	if o == "ok" {
		return "✓"
	}
	return "✗ " + o
}

// approve asks the person about a call (or a server's sampling request) and answers.
func (ch *chat) approve(cx context.Context, ev session.Event) {
	ap := ev.Approval
	if ap == nil {
		return
	}
	what := "run " + termsafe.String(ap.Tool)
	if ap.Kind == "sampling" {
		what = "let " + termsafe.String(ap.Server) + " use the model for a completion"
	}
	args := ""
	if len(ap.Args) > 0 {
		args = " " + termsafe.String(clipText(string(ap.Args), 200))
	}
	ch.showPreview(cx, ap.Preview)
	qcx, already, done := ch.asking(cx, ap.ID)
	defer done()
	if already {
		return
	}
	for {
		line, ok, interrupted := ch.readLine(qcx, fmt.Sprintf("Allow the agent to %s%s? [y]es, [a]lways this session, [n]o: ", what, args), false)
		if cx.Err() != nil {
			return
		}
		if qcx.Err() != nil { // answered on a page (or another terminal) following the session
			ch.io.printf("\n%s\n", ch.io.dim("(answered elsewhere)"))
			return
		}
		reason := "the person said no"
		if interrupted { // Ctrl-C cancels the question: the call is refused, the turn goes on
			ch.io.printf("%s\n", ch.io.dim("(question cancelled: the call is refused)"))
			line, reason = "n", "the person cancelled the question"
		}
		var decision permission.Action
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			decision = permission.Allow
		case "a", "always":
			decision = permission.AllowSession
		case "n", "no", "":
			decision = permission.Deny
		}
		if !ok {
			decision = permission.Deny
		}
		if decision == "" {
			continue
		}
		answer := permission.Answer{Decision: decision}
		if decision == permission.Deny {
			answer.Reason = reason
		}
		err := ch.s.Approve(cx, ap.ID, answer)
		if err != nil && remote.CodeOf(err) != remote.CodeNotFound {
			ch.io.printf("%s\n", termsafe.String(err.Error()))
		}
		return
	}
}

func clipText(s string, n int) string { return words.Clip(s, n+1) }
