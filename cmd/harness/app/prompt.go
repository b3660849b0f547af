package app

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/hostclient"
	"github.com/cordisgo/harness/internal/termsafe"
	"github.com/cordisgo/harness/profiles"
)

func (a *invocation) promptCommand() *cobra.Command {
	var asJSON bool
	var vars []string
	cmd := &cobra.Command{
		Use:   "prompt",
		Short: "Print the system prompt the main agent gets (--json: its sections with their owners)",
		Long: `Print the system prompt assembled at the root: what the main agent's requests carry
(its preamble, the project instructions from AGENTS.md files, the MCP servers'
instructions, ...). With --json, its text and its sections, each with its name, owner
and order. A profile with a model and no agent gets the agent ask and chat would add.`,
		Args: noArgs,
		RunE: action(func(cmd *cobra.Command, _ []string) error {
			vm, err := parseKeyValues("--var", "NAME=VALUE", vars, false)
			if err != nil {
				return err
			}
			// The prompt ask and chat would send: their agent row, whose preamble and
			// project instructions are sections of the prompt.
			a.adjustRows = func(rows []profiles.Row) []profiles.Row {
				for _, r := range rows {
					if r.Enabled && r.Use == host.UseModel {
						return host.WithAgentRow(rows, "-", nil)
					}
				}
				return rows
			}
			return a.withCaller(cmd.Context(), func(cx context.Context, c *hostclient.Caller) error {
				p, err := host.MethodPrompt.Call(cx, c, host.PromptParams{Vars: vm})
				if err != nil {
					return refused(cx, c, "", err)
				}
				if !asJSON {
					if p.Text != "" {
						fmt.Fprintln(a.stdout, termsafe.String(p.Text))
					}
					return nil
				}
				return a.out().JSON(p)
			})
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the prompt and its sections, with owners, as JSON")
	cmd.Flags().StringArrayVar(&vars, "var", nil, "set a variable for interpolated sections, `NAME=VALUE`; repeatable")
	return cmd
}
