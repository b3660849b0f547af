package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/hostview"
	"github.com/cordisgo/harness/plugins/agent"
	"github.com/cordisgo/harness/plugins/agent/agentapi"
	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/remote"
	"github.com/cordisgo/harness/turn"
)

func (a *invocation) sessionsCommand() *cobra.Command {
	var listJSON, showJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the stored agent sessions, newest first",
		Args:  noArgs,
		RunE: action(func(*cobra.Command, []string) error {
			st, err := a.sessionStore()
			if err != nil {
				return err
			}
			infos, err := st.List()
			if err != nil {
				return failure(err)
			}
			if listJSON {
				return a.out().JSON(infos)
			}
			if len(infos) == 0 {
				fmt.Fprintf(a.stderr, "no sessions in %s\n", st.Dir())
				return nil
			}
			return hostview.Sessions(a.stdout, infos)
		}),
	}
	list.Flags().BoolVar(&listJSON, "json", false, "print the sessions as JSON")

	show := &cobra.Command{
		Use:   "show ID|last",
		Short: "Print a stored session's conversation (--json: its event log)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: action(func(_ *cobra.Command, argv []string) error {
			_, events, err := a.readSession(argv[0])
			if err != nil {
				return err
			}
			if showJSON {
				return hostview.JSONLines(a.stdout, events)
			}
			return hostview.Transcript(a.stdout, events)
		}),
	}
	show.Flags().BoolVar(&showJSON, "json", false, "print the session's events as JSON lines")

	var f agentFlags
	resume := &cobra.Command{
		Use:   "resume ID|last TASK...",
		Short: "Reopen a stored session and give its agent one more task (as harness ask)",
		Long: `Reopen a stored session: its history is rebuilt from the log (a torn last line,
left by a crash, is dropped; calls left without a result get an aborted one) and
the agent works on the task with it. Output and exit status as harness ask.`,
		Args: args(cobra.MinimumNArgs(1)),
		RunE: action(func(cmd *cobra.Command, argv []string) error {
			task, err := a.taskText(argv[1:], `harness sessions resume ID "TASK"`,
				"; harness chat --resume ID continues it as a conversation")
			if err != nil {
				return err
			}
			if f.agent != "" {
				return usageErrorf("sessions resume: --agent: a session keeps its agent")
			}
			st, events, err := a.readSession(argv[0])
			if err != nil {
				return err
			}
			after := events[len(events)-1].Seq
			return a.withAgent(cmd.Context(), f, func(cx context.Context, svc *agent.Service) error {
				if svc.Store().Dir() != st.Dir() {
					return failure(fmt.Errorf("the agent stores sessions in %s, not %s", svc.Store().Dir(), st.Dir()))
				}
				return a.runTurn(cx, nil, func(cx context.Context) (*turn.Session, error) {
					return turn.Open(cx, remote.NewLocal(a.agentHost.Root()), agentapi.OpenParams{Session: events[0].Header.ID, Model: f.model, Unattended: true})
				}, after, task, f)
			})
		}),
	}
	f.add(resume)
	return group("sessions", "List, show and resume agent sessions", list, show, resume)
}

// readSession reads the events of the stored session id (or session.Last) from the
// session store.
func (a *invocation) readSession(id string) (*session.Store, []session.Event, error) {
	st, err := a.sessionStore()
	if err != nil {
		return nil, nil, err
	}
	events, err := st.ReadID(id)
	if err != nil {
		return nil, nil, sessionError(err)
	}
	return st, events, nil
}

// sessionStore is the store of the profile's top-level agent (its sessionsDir), else of
// the default directory.
func (a *invocation) sessionStore() (*session.Store, error) {
	dir, err := a.sessionsDir()
	if err != nil {
		return nil, failure(err)
	}
	p, err := a.loadProfile()
	if err != nil {
		return nil, err
	}
	return session.OpenStore(host.SessionsDir(p.Rows, dir)), nil
}

// sessionError reports a session that cannot be read: an unknown one (with a did-you-mean
// for a mistyped id, session.UnknownError) is a usage error.
func sessionError(err error) error {
	ue, ok := errors.AsType[*session.UnknownError](err)
	switch {
	case !ok:
		return failure(err)
	case ue.ID == session.Last:
		return usageErrorf("%v", ue)
	}
	return usageErrorf("%v; see harness sessions list", ue)
}
