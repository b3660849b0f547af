package app

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/internal/termsafe"
	"github.com/cordisgo/harness/plugins/agent"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/remote"
)

// interruptHook, when set, gets SIGINT before the command's context does: Main calls it on
// a signal, and when it returns true the signal was taken (harness chat cancelled the turn
// in flight) and the command goes on. A signal it does not take shuts the command down as
// usual, and a second one after that kills the servers and exits.
var interruptHook atomic.Pointer[func() bool]

// interrupted gives a signal to the hook, and reports whether it took it.
func interrupted() bool {
	if h := interruptHook.Load(); h != nil {
		return (*h)()
	}
	return false
}

// chatIO is the terminal side of harness chat: lines typed by the person (read by one
// goroutine, so that an approval asked during a turn and the next message share stdin), and
// the output, with ANSI styles only on a terminal.
type chatIO struct {
	lines  chan string // closed at EOF
	out    io.Writer
	styled bool
	mu     sync.Mutex
}

func (t *chatIO) printf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.out, format, args...)
}

// dim writes s dimmed (on a terminal).
func (t *chatIO) dim(s string) string {
	if !t.styled || s == "" {
		return s
	}
	return "\x1b[2m" + s + "\x1b[0m"
}

func (a *invocation) chatCommand() *cobra.Command {
	var f agentFlags
	var resume string
	var noReasoning bool
	cmd := &cobra.Command{
		Use:   "chat [flags]",
		Short: "Talk with the agent on the terminal",
		Long: `Talk with the agent: each line you type is a message; the model's answer streams as
it arrives, its reasoning dimmed (--no-reasoning or /reasoning hides it), and each tool
call is one line with its outcome and time. When the agent's permissions ask about a
call, you answer y (once), a (for the rest of the session) or n.

Ctrl-C cancels the turn in flight (the model's stream and the tool calls: servers are
told); at the prompt, Ctrl-C or Ctrl-D (or /exit) leaves. Commands:

  /tools            the tools the agent sees
  /model [NAME]     the models of the profile, or switch to NAME (a new session)
  /reasoning        show or hide the model's reasoning
  /clear            start a new session
  /resume ID|last   continue a stored session (harness sessions list), or the latest
  /exit             leave

Sessions are logged like those of harness ask: harness sessions list|show|resume.

With a host running (harness run), chat talks with the host's agent, on the host's
servers (this process starts none); approvals are still asked here, and Ctrl-C cancels
the turn on the host. --local: this process starts its own; --mode and --allow work in
process too. A host without an agent is said in one line, and chat works in process.`,
		Example: `  harness chat
  harness chat --model pro --allow 'demo/*'
  harness chat --mode ptc
  harness chat --resume 20261203-100000-abcdef`,
		Args: noArgs,
		RunE: action(func(cmd *cobra.Command, _ []string) error {
			newIO := func(cx context.Context) *chatIO {
				term := &chatIO{lines: make(chan string), out: a.stdout, styled: isTerminal(a.stdout)}
				go func() {
					defer close(term.lines)
					sc := bufio.NewScanner(a.stdin)
					sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
					for sc.Scan() {
						select {
						case term.lines <- sc.Text():
						case <-cx.Done():
							return
						}
					}
				}()
				return term
			}
			if rh, err := a.runningAgentHost(cmd.Context(), f); err != nil {
				return err
			} else if rh != nil {
				cx := cmd.Context()
				ch := &chat{a: a, host: rh, io: newIO(cx), f: f, reasoning: !noReasoning}
				if resume != "" {
					if err := ch.resume(resume); err != nil {
						return agentError(err)
					}
				} else if err := ch.start(); err != nil {
					return agentError(err)
				}
				defer ch.close()
				return ch.loop(cx)
			}
			return a.withAgent(cmd.Context(), f, func(cx context.Context, svc *agent.Service) error {
				ch := &chat{a: a, svc: svc, io: newIO(cx), f: f, reasoning: !noReasoning}
				if resume != "" {
					if err := ch.resume(resume); errors.Is(err, agent.ErrUnknownSession) {
						return sessionError(svc.Store(), resume, err) // the store and a did-you-mean
					} else if err != nil {
						return agentError(err)
					}
				} else if err := ch.start(); err != nil {
					return agentError(err)
				}
				defer func() { _ = ch.s.Close() }()
				return ch.loop(cx)
			})
		}),
	}
	f.add(cmd)
	a.hostFlags(cmd)
	cmd.Flags().StringVar(&resume, "resume", "", "continue the stored session `ID` (last: the most recent one)")
	cmd.Flags().BoolVar(&noReasoning, "no-reasoning", false, "hide the model's reasoning")
	return cmd
}

// chat is one harness chat: the session in use and how it is shown. With host set, the
// session is the running host's (ss: agent/* remote methods), else svc's (s).
type chat struct {
	a         *invocation
	svc       *agent.Service
	host      *runningHost
	ss        *agent.SessionInfo
	seq       int64 // the last event of ss seen
	io        *chatIO
	f         agentFlags
	s         *agent.Session
	reasoning bool
}

func (ch *chat) start() error {
	if ch.host != nil {
		return hostSession(ch, agent.MethodStart, agent.StartParams{Agent: ch.f.agent, Model: ch.f.model})
	}
	s, err := ch.svc.Start(agent.StartOptions{Agent: ch.f.agent, Model: ch.f.model, Mode: ch.f.mode, Interactive: true})
	if err != nil {
		return err
	}
	ch.use(s)
	return nil
}

func (ch *chat) resume(id string) error {
	if ch.host != nil {
		if err := hostSession(ch, agent.MethodOpen, agent.OpenParams{Session: id, Model: ch.f.model}); err != nil {
			return err
		}
		ch.io.printf("%s\n", ch.io.dim(fmt.Sprintf("resumed: %d turns", ch.ss.Turns)))
		return nil
	}
	s, err := ch.svc.Resume(id, agent.StartOptions{Model: ch.f.model, Mode: ch.f.mode, Interactive: true})
	if err != nil {
		return err
	}
	ch.use(s)
	info := s.Info()
	ch.io.printf("%s\n", ch.io.dim(fmt.Sprintf("resumed: %d turns", info.Turns)))
	return nil
}

func (ch *chat) use(s *agent.Session) {
	ch.close()
	ch.s = s
	ch.banner(s.Agent(), s.Model(), s.ID())
	if ms, ok := model.Key.Get(ch.a.agentHost.Root()); ok {
		if err := ms.Check(s.Model()); err != nil {
			ch.io.printf("%s\n", termsafe.String("warning: "+err.Error()+" (/model switches models)"))
		}
	}
}

// banner introduces the session in use.
func (ch *chat) banner(agentName, modelName, id string) {
	who := "the main agent"
	if agentName != "" {
		who = "agent " + agentName
	}
	where := ""
	if ch.host != nil {
		where = fmt.Sprintf(" · on the host (pid %d)", ch.host.info.PID)
	}
	ch.io.printf("%s\n", ch.io.dim(fmt.Sprintf("harness chat · %s · model %s · session %s%s — /help for commands, Ctrl-C cancels a turn, Ctrl-D leaves", who, termsafe.String(modelName), id, where)))
}

// close closes the session in use, if any.
func (ch *chat) close() {
	if ch.s != nil {
		_ = ch.s.Close()
		ch.s = nil
	}
	if ch.ss != nil {
		cx, cancel := context.WithTimeout(context.Background(), hostAnswerTimeout)
		defer cancel()
		_, _ = agent.MethodClose.Call(cx, ch.host.cl, agent.SessionParams{Session: ch.ss.ID})
		ch.ss = nil
	}
}

// loop reads messages until EOF, /exit or the command's end.
func (ch *chat) loop(cx context.Context) error {
	for {
		ch.io.printf("> ")
		var line string
		var ok bool
		select {
		case line, ok = <-ch.io.lines:
		case <-cx.Done():
			ch.io.printf("\n")
			return nil
		}
		if !ok {
			ch.io.printf("\n")
			return nil
		}
		line = strings.TrimSpace(line)
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, "/"):
			if done, err := ch.command(line); done || err != nil {
				return err
			}
			continue
		}
		if err := ch.turn(cx, line); err != nil {
			return err
		}
	}
}

// command runs a slash command; done ends the chat.
func (ch *chat) command(line string) (done bool, err error) {
	name, arg, _ := strings.Cut(strings.TrimPrefix(line, "/"), " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case "exit", "quit":
		return true, nil
	case "help":
		ch.io.printf("%s\n", strings.Join(chatCommands, "  "))
	case "reasoning":
		ch.reasoning = !ch.reasoning
		ch.io.printf("reasoning %s\n", map[bool]string{true: "shown", false: "hidden"}[ch.reasoning])
	case "clear":
		if err := ch.start(); err != nil {
			ch.io.printf("%s\n", termsafe.String(err.Error()))
		}
	case "resume":
		if arg == "" {
			ch.io.printf("usage: /resume ID (harness sessions list shows them)\n")
			break
		}
		if err := ch.resume(arg); err != nil {
			ch.io.printf("%s\n", termsafe.String(err.Error()))
		}
	case "model":
		if ch.host != nil {
			if arg == "" {
				ch.io.printf("* %s (the host's models: harness profile show on the host's profile)\n", termsafe.String(ch.ss.Model))
				break
			}
			if err := hostSession(ch, agent.MethodStart, agent.StartParams{Agent: ch.f.agent, Model: arg}); err != nil {
				ch.io.printf("%s\n", termsafe.String(err.Error()))
				break
			}
			ch.f.model = arg
			break
		}
		ms, _ := model.Key.Get(ch.a.agentHost.Root())
		if arg == "" {
			if ms != nil {
				for _, m := range ms.List() {
					mark := " "
					if m.Name == ch.s.Model() {
						mark = "*"
					}
					ch.io.printf("%s %s (%s %s)\n", mark, m.Name, m.Provider, m.ID)
				}
			}
			break
		}
		f := ch.f
		f.model = arg
		s, err := ch.svc.Start(agent.StartOptions{Agent: f.agent, Model: arg, Mode: f.mode, Interactive: true})
		if err != nil {
			ch.io.printf("%s\n", termsafe.String(err.Error()))
			break
		}
		ch.f = f
		ch.use(s)
	case "tools":
		ch.tools()
	default:
		known := []string{"/quit", "/help"}
		for _, c := range chatCommands {
			known = append(known, strings.Fields(c)[0])
		}
		ch.io.printf("unknown command /%s%s (/help lists them)\n", termsafe.String(name), nearest("/"+name, known))
	}
	return false, nil
}

// tools lists the tools the agent's host sees at its root (host.MethodTools).
func (ch *chat) tools() {
	var cl remote.Caller
	if ch.host != nil {
		cl = ch.host.cl
	} else {
		cl = remote.NewLocal(ch.a.agentHost.Root())
	}
	cx, cancel := context.WithTimeout(context.Background(), hostAnswerTimeout)
	defer cancel()
	tools, err := host.MethodTools.Call(cx, cl, struct{}{})
	if err != nil {
		ch.io.printf("%s\n", termsafe.String(err.Error()))
		return
	}
	for _, t := range tools {
		desc, _, _ := strings.Cut(t.Description, "\n")
		ch.io.printf("%-40s %s\n", termsafe.String(t.Name), ch.io.dim(termsafe.String(desc)))
	}
}

// chatCommands are the slash commands /help lists, with their arguments (/quit and /help
// work too).
var chatCommands = []string{"/tools", "/model [NAME]", "/reasoning", "/clear", "/resume ID|last", "/exit"}

// turn sends text and shows the turn as it happens; Ctrl-C cancels it.
func (ch *chat) turn(cx context.Context, text string) error {
	if ch.host != nil {
		return ch.hostTurn(cx, text)
	}
	s := ch.s
	var last int64
	if evs := s.Events(); len(evs) > 0 {
		last = evs[len(evs)-1].Seq
	}
	sub := s.Subscribe(last)
	hook := func() bool {
		if !s.Running() {
			return false
		}
		s.Cancel()
		return true
	}
	interruptHook.Store(&hook)
	defer interruptHook.Store(nil)

	type result struct {
		end *agent.TurnEnd
		err error
	}
	res := make(chan result, 1)
	go func() {
		end, err := s.Send(cx, text)
		sub.Close()
		res <- result{end, err}
	}()
	shown := ch.show(cx, sub.Next)
	r := <-res
	switch {
	case errors.Is(r.err, agent.ErrCancelled):
		ch.io.printf("\n%s\n", ch.io.dim("(cancelled)"))
	case r.err != nil && cx.Err() == nil && !shown: // an error event shows it once
		ch.io.printf("\n%s\n", termsafe.String("error: "+r.err.Error()))
	}
	return nil
}

// show prints the events of a turn until sub is closed: the answer streamed, reasoning
// dimmed, a line per tool call, approvals asked on the terminal. It reports whether it
// printed an error of the turn.
func (ch *chat) show(cx context.Context, next func(context.Context) (agent.Event, error)) (shownErr bool) {
	inReasoning, midLine := false, false
	// Reasoning is dimmed as a whole: the style starts with its first piece and ends with
	// it, so the pieces between are plain text.
	endReasoning := func() {
		if inReasoning && ch.io.styled {
			ch.io.printf("\x1b[0m")
		}
		inReasoning = false
	}
	endLine := func() {
		endReasoning()
		if midLine {
			ch.io.printf("\n")
			midLine = false
		}
	}
	for {
		ev, err := next(cx)
		if err != nil {
			endLine()
			return shownErr
		}
		who := ""
		if ev.Agent != "" {
			who = ev.Agent + ": "
		}
		switch ev.Type {
		case agent.EventReasoningDelta:
			if !ch.reasoning || ev.Agent != "" {
				continue
			}
			if !inReasoning && ch.io.styled {
				ch.io.printf("\x1b[2m")
			}
			inReasoning, midLine = true, true
			ch.io.printf("%s", termsafe.String(ev.Text))
		case agent.EventTextDelta:
			if ev.Agent != "" {
				continue
			}
			if inReasoning {
				endReasoning()
				ch.io.printf("\n")
			}
			midLine = !strings.HasSuffix(ev.Text, "\n")
			ch.io.printf("%s", termsafe.String(ev.Text))
		case agent.EventRetry:
			endLine()
			ch.io.printf("%s\n", ch.io.dim("retrying: "+termsafe.String(ev.Error)))
		case agent.EventToolResult:
			if ev.Call == nil || ev.Result == nil {
				continue
			}
			endLine()
			ch.io.printf("  %s%s %s %s\n", who, termsafe.String(ev.Call.Tool), outcomeWord(ev.Result.Outcome),
				ch.io.dim(fmt.Sprintf("(%s)", time.Duration(ev.Result.Duration)*time.Millisecond)))
		case agent.EventApprovalAsked:
			endLine()
			ch.approve(cx, ev)
		case agent.EventError:
			endLine()
			ch.io.printf("%s\n", termsafe.String("error: "+ev.Error))
			shownErr = shownErr || ev.Agent == ""
		case agent.EventTurnEnd:
			endLine()
			if e := ev.End; e != nil && ev.Agent == "" {
				note := fmt.Sprintf("%d step%s · %d prompt tokens (%d cached) · %d completion tokens",
					e.Steps, plural(e.Steps), e.Usage.PromptTokens, e.Usage.CacheHitTokens, e.Usage.CompletionTokens)
				if e.Reason != agent.StopDone {
					note = string(e.Reason) + " · " + note
				}
				ch.io.printf("%s\n", ch.io.dim(note))
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
func (ch *chat) approve(cx context.Context, ev agent.Event) {
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
	for {
		ch.io.printf("Allow the agent to %s%s? [y]es, [a]lways this session, [n]o: ", what, args)
		var line string
		var ok bool
		select {
		case line, ok = <-ch.io.lines:
		case <-cx.Done():
			return
		}
		decision := ""
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			decision = agent.DecisionAllow
		case "a", "always":
			decision = agent.DecisionAllowSession
		case "n", "no", "":
			decision = agent.DecisionDeny
		}
		if !ok {
			decision = agent.DecisionDeny
		}
		if decision == "" {
			continue
		}
		if err := ch.answer(cx, ap.ID, agent.Answer{Decision: decision, Reason: "the person said no"}); err != nil && !errors.Is(err, agent.ErrUnknownApproval) {
			ch.io.printf("%s\n", termsafe.String(err.Error()))
		}
		return
	}
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
