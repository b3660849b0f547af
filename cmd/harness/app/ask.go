package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/hostclient"
	"github.com/cordisgo/harness/hostview"
	"github.com/cordisgo/harness/plugins/agent"
	"github.com/cordisgo/harness/plugins/agent/agentapi"
	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/model/openaicompat"
	"github.com/cordisgo/harness/plugins/remote"
	"github.com/cordisgo/harness/profiles"
	"github.com/cordisgo/harness/termui"
	"github.com/cordisgo/harness/turn"
)

// ExitIncomplete: harness ask (or sessions resume) ended the turn before the model
// finished: the step limit, the token budget, the output limit, or a stream cut after part
// of the answer was shown. What the model said last is on stdout.
const ExitIncomplete = 3

// agentFlags are the flags of the commands that run an agent turn.
type agentFlags struct {
	json  bool
	agent string
	model string
	mode  string
	allow []string
}

func (f *agentFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.BoolVar(&f.json, "json", false, "write the session's events as JSON lines on stdout instead of the answer")
	fl.StringVar(&f.agent, "agent", "", "the agent (an agent scope's name, such as reviewer or coder.review; default the main agent)")
	fl.StringVar(&f.model, "model", "", "the model, by its name in the profile (default the agent's)")
	fl.StringVar(&f.mode, "mode", "", "the agent's `MODE`: standard, or ptc (the model writes TypeScript programs that call the tools, docs/ptc.md); default the agent's")
	fl.StringArrayVar(&f.allow, "allow", nil, "allow the tools matching `PATTERN` without asking (a tool name or SERVER/TOOL glob); repeatable")
}

func (a *invocation) askCommand() *cobra.Command {
	var f agentFlags
	cmd := &cobra.Command{
		Use:   "ask [flags] TASK...",
		Short: "Give the agent a task and print its final answer",
		Long: `Give the agent a task: the model works with the profile's tools until it answers,
and the answer is printed on stdout (with --json, every event of the session as a
JSON line). The task is the arguments, or stdin when it is piped ("-" reads stdin).

Nobody is asked for approvals: calls the agent's permissions would ask about are
refused and the model is told why; --allow PATTERN allows more tools.

With a host running (harness run), the task goes to the host's agent, which uses the
host's servers (--local: this process starts its own; --mode and --allow work in
process too). A host without an agent is said in one line, and ask works in process.

Exit status: 0 the model answered; 1 failure (the model's API, an interruption);
2 usage or profile error; 3 the turn stopped before the model finished (step
limit, token budget, output limit, an answer whose stream was cut).`,
		Example: `  harness ask "add 2 and 40 with the demo server"
  harness ask < task.md                                  # the task from stdin
  harness ask --allow 'gh/*' "list my open pull requests" # gh's tools without asking
  harness ask --json "summarize README.md" | jq .        # every event as a JSON line`,
		Args: args(cobra.ArbitraryArgs),
		RunE: action(func(cmd *cobra.Command, argv []string) error {
			task, err := a.taskText(argv, `harness ask "TASK"`, "")
			if err != nil {
				return err
			}
			if rh, err := a.runningAgentHost(cmd.Context(), f); err != nil {
				return err
			} else if rh != nil {
				return a.runTurn(cmd.Context(), rh, func(cx context.Context) (*turn.Session, error) {
					return turn.Start(cx, rh.Client, agentapi.StartParams{Agent: f.agent, Model: f.model})
				}, 0, task, f)
			}
			if f.agent == "" {
				// A model without a key fails the task before the profile's servers start.
				a.preflight = func(rows []profiles.Row) error {
					if err := host.CheckModel(cmd.Context(), rows, a.catalog, host.AgentModel(rows, f.model)); errors.Is(err, openaicompat.ErrNoAPIKey) {
						return failure(err)
					}
					return nil
				}
			}
			return a.withAgent(cmd.Context(), f, func(cx context.Context, svc *agent.Service) error {
				return a.runTurn(cx, nil, func(cx context.Context) (*turn.Session, error) {
					return turn.Start(cx, remote.NewLocal(a.agentHost.Root()), agentapi.StartParams{Agent: f.agent, Model: f.model, Mode: f.mode, Unattended: true})
				}, 0, task, f)
			})
		}),
	}
	f.add(cmd)
	a.fwd.add(cmd)
	return cmd
}

// taskText is the task of ask (and of sessions resume): the arguments, else stdin when it
// is not a terminal. usage is the command line that shows where the task goes; more, when
// not "", is said after it.
func (a *invocation) taskText(argv []string, usage, more string) (string, error) {
	if in, _ := a.stdin.(*os.File); len(argv) == 1 && argv[0] == "-" || len(argv) == 0 && (in == nil || !termui.IsTerminal(in)) {
		b, err := readAll(a.stdin)
		if err != nil {
			return "", usageErrorf("reading the task from stdin: %v", err)
		}
		if t := strings.TrimSpace(string(b)); t != "" {
			return t, nil
		}
		return "", usageErrorf("a task is required: %s, or pipe it on stdin (stdin was empty)%s", usage, more)
	}
	if t := strings.TrimSpace(strings.Join(argv, " ")); t != "" {
		return t, nil
	}
	return "", usageErrorf("a task is required: %s, or pipe it on stdin%s", usage, more)
}

// agentError maps the agent's errors: an unknown agent or model is a usage error.
func agentError(err error) error {
	if _, ok := errors.AsType[*exitError](err); ok {
		return err
	}
	if errors.Is(err, agent.ErrUnknownAgent) || errors.Is(err, session.ErrUnknownSession) || strings.Contains(err.Error(), "unknown model") ||
		remote.CodeOf(err) == remote.CodeNotFound {
		return usageErrorf("%v", err)
	}
	return failure(err)
}

// withAgent starts the profile's host with an agent at its top level (the profile's, or
// one with the defaults) and runs fn with the agent service.
func (a *invocation) withAgent(cx context.Context, f agentFlags, fn func(context.Context, *agent.Service) error) error {
	dir, err := a.sessionsDir()
	if err != nil {
		return failure(err)
	}
	switch f.mode {
	case "", agent.ModeStandard, agent.ModePTC:
	default:
		return usageErrorf("--mode: want %q or %q, got %q", agent.ModeStandard, agent.ModePTC, f.mode)
	}
	// An agent session waits on its model and allocates little: Go's default collector keeps
	// its resident memory low (docs/performance.md, "A long chat session").
	a.gc.Stop()
	a.adjustRows = func(rows []profiles.Row) []profiles.Row {
		rows = host.WithAgentRow(rows, dir, f.allow)
		if f.mode == agent.ModePTC {
			rows = host.WithPTCRow(rows)
		}
		return rows
	}
	return a.withHost(cx, func(cx context.Context, h *host.Host) error {
		svc, err := host.StartedAgent(h)
		if me, ok := errors.AsType[*host.AgentMountError](err); ok {
			return profileError(me)
		} else if err != nil {
			return failure(err)
		}
		a.agentHost = h
		return fn(cx, svc)
	})
}

// sessionsDir is session.DefaultDir in the invocation's environment.
func (a *invocation) sessionsDir() (string, error) {
	return session.DefaultDir(a.getenv)
}

// runTurn opens a session (open), sends task and prints the outcome: the answer (or with
// --json the events after the sequence number after) on stdout, one line per tool call on
// stderr when it is a terminal; the session is closed after. On a running host (rh set),
// nobody is asked for approvals: a call the host's permissions would ask about is refused
// here, the model told why (in process the session is unattended, and the agent refuses
// it). An interrupt cancels the turn.
func (a *invocation) runTurn(cx context.Context, rh *hostclient.Host, open func(context.Context) (*turn.Session, error), after int64, task string, f agentFlags) error {
	s, err := open(cx)
	if err != nil {
		if rh != nil {
			return a.agentHostError(cx, rh, err)
		}
		return agentError(err)
	}
	defer func() { _ = s.Close(cx) }()
	enc := json.NewEncoder(a.stdout)
	var printErr error
	end, err := s.Run(cx, task, after, func(ev session.Event) {
		if printErr == nil {
			printErr = a.printEvent(enc, ev, f.json)
		}
		if rh == nil {
			return // the unattended agent refuses it; a second answer finds no question
		}
		if err := s.Refuse(cx, ev, "nobody to ask (harness ask); run harness chat to approve calls, or ask --local --allow PATTERN"); err != nil {
			a.out().Note("refusing %s: %v", ev.Approval.Tool, err)
		}
	})
	if me, ok := errors.AsType[*turn.MethodError](err); ok && cx.Err() == nil {
		if rh != nil && me.Method == agentapi.MethodSend.Name() {
			return a.agentHostError(cx, rh, err)
		}
		if rh != nil {
			return failure(rh.Explain(cx, "", me.Err))
		}
		return agentError(err)
	}
	switch {
	case cx.Err() != nil:
		return failure(errors.New("interrupted"))
	case errors.Is(err, turn.ErrEnded) && rh != nil:
		return failure(fmt.Errorf("%s closed the session before the turn ended", rh))
	case printErr != nil && err == nil:
		err = printErr
	}
	return a.turnOutcome(end, err, s.Info().ID, f)
}

// turnOutcome prints a turn's answer (unless --json) and returns the command's error for
// how it ended.
func (a *invocation) turnOutcome(end *session.TurnEnd, err error, id string, f agentFlags) error {
	if !f.json && end != nil {
		hostview.Answer(a.stdout, end.Text)
	}
	err = turn.Outcome(end, err)
	switch {
	case errors.Is(err, agent.ErrCancelled):
		return failure(errors.New("interrupted"))
	case errors.As(err, new(*turn.IncompleteError)):
		a.out().Note("%v (session %s)", err, id)
		return &exitError{code: ExitIncomplete, err: errors.New("")}
	case err != nil:
		return failure(err)
	}
	return nil
}

// printEvent writes one event of a turn: as a JSON line with asJSON, else a line for a tool
// result on the terminal, if there is one.
func (a *invocation) printEvent(enc *json.Encoder, ev session.Event, asJSON bool) error {
	if asJSON {
		return enc.Encode(ev)
	}
	if a.term != nil {
		hostview.ToolLine(a.term, ev)
	}
	return nil
}
