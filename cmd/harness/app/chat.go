package app

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/plugins/agent"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/remote"
	"github.com/cordisgo/harness/termchat"
	"github.com/cordisgo/harness/termui"
)

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

` + termchat.CommandsHelp() + `
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
			o := termchat.Options{In: a.stdin, Out: a.stdout, Styled: termui.IsTerminal(a.stdout), Agent: f.agent, Model: f.model,
				Resume: resume, HideReasoning: noReasoning, OnInterrupt: a.interrupt.set}
			if kb := a.keyboard(); kb != nil {
				o.Keyboard = kb
			}
			if a.term != nil && o.Styled {
				// The chat's text goes through the terminal's live lines, so that a progress bar
				// waits for a line being streamed instead of erasing it.
				o.Out = a.term
			}
			if o.Keyboard != nil && o.Styled { // a long approval preview through the pager
				o.Page = func(cx context.Context, text string) (bool, error) {
					return termui.Page(cx, termui.PageOptions{Term: o.Out, Env: a.env}, text)
				}
			}
			if rh, err := a.runningAgentHost(cmd.Context(), f); err != nil {
				return err
			} else if rh != nil {
				o.Caller, o.Where = rh.Client, fmt.Sprintf(" · on the host (pid %d)", rh.Info.PID)
				if err := termchat.Run(cmd.Context(), o); err != nil {
					return a.agentHostError(cmd.Context(), rh, err)
				}
				return nil
			}
			return a.withAgent(cmd.Context(), f, func(cx context.Context, svc *agent.Service) error {
				o.Caller, o.Mode = remote.NewLocal(a.agentHost.Root()), f.mode
				if ms, ok := model.Key.Get(a.agentHost.Root()); ok {
					o.Models, o.CheckModel = ms.List, ms.Check
				}
				o.ResumeError = func(id string, err error) error {
					if remote.CodeOf(err) == remote.CodeNotFound {
						return sessionError(svc.Store().Unknown(id)) // the store and a did-you-mean
					}
					return agentError(err)
				}
				if err := termchat.Run(cx, o); err != nil {
					return agentError(err)
				}
				return nil
			})
		}),
	}
	f.add(cmd)
	a.fwd.add(cmd)
	cmd.Flags().StringVar(&resume, "resume", "", "continue the stored session `ID` (last: the most recent one)")
	cmd.Flags().BoolVar(&noReasoning, "no-reasoning", false, "hide the model's reasoning")
	return cmd
}
