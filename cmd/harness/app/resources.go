package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/hostclient"
	"github.com/cordisgo/harness/hostview"
	"github.com/cordisgo/harness/internal/termsafe"
	"github.com/cordisgo/harness/plugins/mcpresources"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// resourcesCommand is resources list, templates, read and watch: they call the shared resource
// tools the mcpresources plugin registers through the registry like a model would, so they
// see exactly what an agent at the root sees.
func (a *invocation) resourcesCommand() *cobra.Command {
	var asJSON bool
	var cursor, output string
	call := func(cmd *cobra.Command, tool string, params map[string]string) error {
		raw, err := json.Marshal(params)
		if err != nil {
			return err
		}
		return a.withCaller(cmd.Context(), func(cx context.Context, c *hostclient.Caller) error {
			res, terr, err := resourceTool(cx, c, tool, raw)
			switch {
			case err != nil:
				return err
			case terr != nil || res == nil || len(res.Raw) == 0:
				// A refusal or a tool error: the registry's words.
				if asJSON {
					if err := a.out().JSON(hostview.Canonical(res)); err != nil {
						return err
					}
				} else if text := res.Text(); text != "" && terr == nil {
					fmt.Fprintln(a.stdout, termsafe.String(text))
				}
				if terr != nil {
					return failure(terr)
				}
				return nil
			case asJSON:
				return a.out().JSON(hostview.WithoutEmpty(res.Raw))
			}
			return a.out().Resource(tool, res.Raw, output)
		})
	}
	listing := func(tool string) func(cmd *cobra.Command, argv []string) error {
		return func(cmd *cobra.Command, argv []string) error {
			if len(argv) == 1 {
				return call(cmd, tool, withCursor(map[string]string{"server": argv[0]}, cursor))
			}
			if cursor != "" {
				return usageErrorf("%s--cursor continues one server's listing: name the SERVER", pathPrefix(cmd))
			}
			return a.withCaller(cmd.Context(), func(cx context.Context, c *hostclient.Caller) error {
				return a.listEveryServer(cx, c, tool, asJSON)
			})
		}
	}
	list := &cobra.Command{
		Use:   "list [SERVER]",
		Short: "List the resources of the MCP servers (or of one): URI, name, MIME type, size",
		Args:  args(cobra.MaximumNArgs(1)),
		RunE:  action(listing(mcpresources.ToolList)),
	}
	templates := &cobra.Command{
		Use:   "templates [SERVER]",
		Short: "List the resource templates of the MCP servers (or of one)",
		Args:  args(cobra.MaximumNArgs(1)),
		RunE:  action(listing(mcpresources.ToolTemplates)),
	}
	read := &cobra.Command{
		Use:   "read SERVER URI",
		Short: "Read one resource of a server: its text to stdout; binary contents with --output FILE",
		Args:  args(cobra.ExactArgs(2)),
		RunE: action(func(cmd *cobra.Command, argv []string) error {
			return call(cmd, mcpresources.ToolRead, map[string]string{"server": argv[0], "uri": argv[1]})
		}),
	}
	read.Flags().StringVarP(&output, "output", "o", "", "write the contents to `FILE` (a binary resource is written only so)")
	for _, c := range []*cobra.Command{list, templates} {
		c.Flags().StringVar(&cursor, "cursor", "", "continue a listing from the server's `CURSOR`")
	}
	for _, c := range []*cobra.Command{list, templates, read} {
		c.Flags().BoolVar(&asJSON, "json", false, "print the canonical result as JSON")
	}
	return group("resources", "List, read and watch MCP server resources", list, templates, read, a.watchCommand())
}

// resourceTool calls one of the resource tools at the host's root (hostclient.CallTool),
// a refusal worded for people.
func resourceTool(cx context.Context, c *hostclient.Caller, tool string, args json.RawMessage) (*toolregistry.Result, error, error) {
	res, terr, err := c.CallTool(cx, tool, args)
	return res, terr, resourceRefusal(cx, c, tool, err)
}

// resourceRefusal words a refusal of a resource tool's call: a root without the tool says
// what the profile needs.
func resourceRefusal(cx context.Context, c *hostclient.Caller, tool string, err error) error {
	if errors.Is(err, hostclient.ErrNoTool) {
		return fmt.Errorf("no %s tool at the root: the profile needs a %s row and an MCP server with resources", tool, host.UseResources)
	}
	if err != nil {
		return refused(cx, c, "", err)
	}
	return nil
}

// listEveryServer prints the listing of tool for every server with resources visible at
// the root (hostview.Output.EveryServer).
func (a *invocation) listEveryServer(cx context.Context, c *hostclient.Caller, tool string, asJSON bool) error {
	listed, err := c.ListEveryServer(cx, tool)
	if err != nil {
		return resourceRefusal(cx, c, tool, err)
	}
	return a.out().EveryServer(tool, listed, asJSON)
}

func withCursor(m map[string]string, cursor string) map[string]string {
	if cursor != "" {
		m["cursor"] = cursor
	}
	return m
}
