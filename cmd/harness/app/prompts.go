package app

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/hostclient"
	"github.com/cordisgo/harness/hostview"
	"github.com/cordisgo/harness/internal/termsafe"
	"github.com/cordisgo/harness/plugins/mcpprompts"
)

// withPrompts is withCaller for the prompts commands: a host whose profile mounts no
// prompts service is an error that says so.
func (a *invocation) withPrompts(cx context.Context, fn func(context.Context, *hostclient.Caller) error) error {
	return a.withCaller(cx, func(cx context.Context, c *hostclient.Caller) error {
		if !c.Has(mcpprompts.MethodList.Name()) {
			return failure(c.MountsNo("prompts service", "mcpprompts"))
		}
		return fn(cx, c)
	})
}

func (a *invocation) promptsCommand() *cobra.Command {
	var listJSON, getJSON bool
	var argFlags []string
	list := &cobra.Command{
		Use:   "list [SERVER]",
		Short: "List the prompt templates of the MCP servers (or of one): server, prompt, arguments, description",
		Long: `List the prompt templates of the MCP servers visible at the root, or of one
server: a table with the arguments (<required> [optional]), or with --json
{"prompts": [...], "errors": [...]} (the servers that could not be listed).`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: action(func(cmd *cobra.Command, argv []string) error {
			server := ""
			if len(argv) == 1 {
				server = argv[0]
			}
			return a.withPrompts(cmd.Context(), func(cx context.Context, c *hostclient.Caller) error {
				l, err := mcpprompts.MethodList.Call(cx, c, mcpprompts.ListParams{Server: server})
				if err != nil {
					return promptError(refused(cx, c, server, err))
				}
				if listJSON {
					return a.out().JSON(l)
				}
				for _, e := range l.Errors {
					// A server that did not connect was reported at start-up.
					if !strings.Contains(e.Error, mcpprompts.ErrNotConnected.Error()) {
						a.out().Note("%s", e.Error)
					}
				}
				return a.out().Prompts(l.Prompts)
			})
		}),
	}
	list.Flags().BoolVar(&listJSON, "json", false, "print the prompts as JSON, with every argument")

	get := &cobra.Command{
		Use:   "get SERVER NAME [--arg NAME=VALUE]...",
		Short: "Render a prompt template with arguments and print its messages",
		Long: `Render a server's prompt template (prompts/get) and print its messages for
people: a header per message with its role, text as it is, images and audio
described, embedded resources with their URI and text, resource links. With
--json, the server's GetPromptResult. Unknown names and missing required
arguments are refused before the request (exit status 2).`,
		Args: args(cobra.ExactArgs(2)),
		RunE: action(func(cmd *cobra.Command, argv []string) error {
			promptArgs, err := parseKeyValues("--arg", "NAME=VALUE", argFlags, true)
			if err != nil {
				return err
			}
			return a.withPrompts(cmd.Context(), func(cx context.Context, c *hostclient.Caller) error {
				res, err := mcpprompts.MethodGet.Call(cx, c, mcpprompts.GetParams{Server: argv[0], Name: argv[1], Arguments: promptArgs})
				if err != nil {
					return promptError(refused(cx, c, argv[0], err))
				}
				if getJSON {
					return a.out().JSON(res)
				}
				return hostview.PromptMessages(termsafe.Writer(a.stdout), res)
			})
		}),
	}
	get.Flags().StringArrayVar(&argFlags, "arg", nil, "a prompt argument, `NAME=VALUE`; repeatable")
	get.Flags().BoolVar(&getJSON, "json", false, "print the server's GetPromptResult as JSON")
	return group("prompts", "List and render MCP prompt templates", list, get)
}

// promptError words the prompts service's refusals: a missing argument says how to give
// one. What it refused before any request (unknown names, arguments) is a usage error
// (hostCaller.refused).
func promptError(err error) error {
	ee, ok := errors.AsType[*exitError](err)
	switch {
	case ok && ee.code == ExitUsage && strings.Contains(err.Error(), "needs the argument"):
		return &exitError{code: ExitUsage, err: fmt.Errorf("%w; give it with --arg NAME=VALUE", ee.err)}
	case ok:
		return err
	}
	return failure(err)
}
