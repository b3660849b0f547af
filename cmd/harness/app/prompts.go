package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/internal/termsafe"
	"github.com/cordisgo/harness/plugins/mcpprompts"
)

// promptsService returns the prompts service of a started host.
func promptsService(h *host.Host) (*mcpprompts.Service, error) {
	return rootService(h, mcpprompts.Key, "prompts service", "mcpprompts")
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
			return a.withHost(cmd.Context(), func(cx context.Context, h *host.Host) error {
				svc, err := promptsService(h)
				if err != nil {
					return err
				}
				ps, err := svc.List(cx, h.Root(), server)
				if err != nil && server != "" {
					return promptError(err)
				}
				if listJSON {
					return writeJSON(a, mcpprompts.NewListing(ps, err))
				}
				for _, e := range mcpprompts.Errors(err) {
					// A server that did not connect was reported at start-up.
					if !errors.Is(e, mcpprompts.ErrNotConnected) {
						errorf(a.stderr, a.prog, "%v", e)
					}
				}
				return a.printPromptTable(ps)
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
			promptArgs, err := parseArgFlags(argFlags)
			if err != nil {
				return err
			}
			return a.withHost(cmd.Context(), func(cx context.Context, h *host.Host) error {
				svc, err := promptsService(h)
				if err != nil {
					return err
				}
				res, err := svc.Get(cx, h.Root(), argv[0], argv[1], promptArgs)
				if err != nil {
					return promptError(err)
				}
				if getJSON {
					return writeJSON(a, res)
				}
				return writePromptMessages(termsafe.Writer(a.stdout), res)
			})
		}),
	}
	get.Flags().StringArrayVar(&argFlags, "arg", nil, "a prompt argument, `NAME=VALUE`; repeatable")
	get.Flags().BoolVar(&getJSON, "json", false, "print the server's GetPromptResult as JSON")
	return group("prompts", "List and render MCP prompt templates", list, get)
}

// parseArgFlags reads --arg NAME=VALUE flags.
func parseArgFlags(flags []string) (map[string]string, error) {
	out := map[string]string{}
	for _, f := range flags {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" {
			return nil, usageErrorf("--arg %q: expected NAME=VALUE", f)
		}
		if _, dup := out[k]; dup {
			return nil, usageErrorf("--arg %s: given twice", k)
		}
		out[k] = v
	}
	return out, nil
}

// promptError maps the prompts service's errors to exit statuses: what it refused before
// any request (unknown names, arguments) is a usage error.
func promptError(err error) error {
	switch {
	case errors.Is(err, mcpprompts.ErrMissingArgument):
		return &exitError{code: ExitUsage, err: fmt.Errorf("%w; give it with --arg NAME=VALUE", err)}
	case errors.Is(err, mcpprompts.ErrUnknownServer), errors.Is(err, mcpprompts.ErrUnknownPrompt),
		errors.Is(err, mcpprompts.ErrUnknownArgument):
		return &exitError{code: ExitUsage, err: err}
	}
	return failure(err)
}

// printPromptTable prints prompts as a table: server, prompt, arguments (<required>
// [optional]), description.
func (a *invocation) printPromptTable(ps []mcpprompts.Prompt) error {
	if len(ps) == 0 {
		fmt.Fprintln(a.stderr, "no prompts")
		return nil
	}
	rows := [][]string{{"SERVER", "PROMPT", "ARGUMENTS", "DESCRIPTION"}}
	for _, p := range ps {
		var args []string
		for _, arg := range p.Arguments {
			if arg.Required {
				args = append(args, "<"+arg.Name+">")
			} else {
				args = append(args, "["+arg.Name+"]")
			}
		}
		desc := p.Description
		if desc == "" {
			desc = p.Title
		}
		rows = append(rows, []string{p.Server, p.Name, dash(strings.Join(args, " ")), dash(host.JoinLines(desc))})
	}
	return a.printTable(rows)
}

// writePromptMessages prints a prompt's messages for people: a header line per message
// with its role, then its content.
func writePromptMessages(w io.Writer, res *mcp.GetPromptResult) error {
	var b strings.Builder
	for i, m := range res.Messages {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "--- %s ---\n", m.Role)
		b.WriteString(describeContent(m.Content))
		if !strings.HasSuffix(b.String(), "\n") {
			b.WriteString("\n")
		}
	}
	if len(res.Messages) == 0 {
		b.WriteString("(no messages)\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// describeContent renders one content block: text as it is, binary data described.
func describeContent(c mcp.Content) string {
	switch c := c.(type) {
	case *mcp.TextContent:
		return c.Text
	case *mcp.ImageContent:
		return fmt.Sprintf("[image %s, %s]", dash(c.MIMEType), byteSize(int64(len(c.Data))))
	case *mcp.AudioContent:
		return fmt.Sprintf("[audio %s, %s]", dash(c.MIMEType), byteSize(int64(len(c.Data))))
	case *mcp.EmbeddedResource:
		r := c.Resource
		if r == nil {
			return "[resource without contents]"
		}
		if r.Blob != nil {
			return fmt.Sprintf("[resource %s, %s, %s binary]", r.URI, dash(r.MIMEType), byteSize(int64(len(r.Blob))))
		}
		head := "[resource " + r.URI
		if r.MIMEType != "" {
			head += ", " + r.MIMEType
		}
		return head + "]\n" + r.Text
	case *mcp.ResourceLink:
		s := "[resource link " + c.URI
		if name := cmp.Or(c.Title, c.Name); name != "" {
			s += " " + fmt.Sprintf("%q", name)
		}
		if c.MIMEType != "" {
			s += ", " + c.MIMEType
		}
		if c.Size != nil {
			s += ", " + byteSize(*c.Size)
		}
		s += "]"
		if c.Description != "" {
			s += "\n" + c.Description
		}
		return s
	case nil:
		return "[empty content]"
	}
	return "[content of an unknown type]"
}
