package app

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/plugins/toolregistry"
)

// The shared resource tools the mcpresources plugin registers; the
// resources commands call them through the registry like a model would,
// so they see exactly what an agent at the root sees.
const (
	toolListResources     = "list_mcp_resources"
	toolListTemplates     = "list_mcp_resource_templates"
	toolReadResource      = "read_mcp_resource"
	resourcesPluginRowUse = "mcpresources"
)

func (a *invocation) resourcesCommand() *cobra.Command {
	var asJSON bool
	var cursor string
	call := func(cmd *cobra.Command, tool string, params map[string]string) error {
		raw, err := json.Marshal(params)
		if err != nil {
			return err
		}
		return a.withHost(cmd.Context(), func(c context.Context, h *host) error {
			reg, err := toolRegistry(h)
			if err != nil {
				return err
			}
			if _, ok := reg.Lookup(h.root, tool); !ok {
				return fmt.Errorf("no %s tool at the root: the profile needs a %s row and an MCP server with resources", tool, resourcesPluginRowUse)
			}
			res, terr := reg.Execute(c, h.root, tool, raw, toolregistry.ExecOptions{})
			if asJSON {
				if err := writeJSON(a, canonical(res)); err != nil {
					return err
				}
			} else if text := res.Text(); text != "" {
				fmt.Fprintln(a.stdout, text)
			}
			if terr != nil {
				return failure(terr)
			}
			return nil
		})
	}
	list := &cobra.Command{
		Use:   "list SERVER",
		Short: "List a server's resources",
		Args:  args(cobra.ExactArgs(1)),
		RunE: action(func(cmd *cobra.Command, argv []string) error {
			return call(cmd, toolListResources, withCursor(map[string]string{"server": argv[0]}, cursor))
		}),
	}
	templates := &cobra.Command{
		Use:   "templates SERVER",
		Short: "List a server's resource templates",
		Args:  args(cobra.ExactArgs(1)),
		RunE: action(func(cmd *cobra.Command, argv []string) error {
			return call(cmd, toolListTemplates, withCursor(map[string]string{"server": argv[0]}, cursor))
		}),
	}
	read := &cobra.Command{
		Use:   "read SERVER URI",
		Short: "Read one resource of a server",
		Args:  args(cobra.ExactArgs(2)),
		RunE: action(func(cmd *cobra.Command, argv []string) error {
			return call(cmd, toolReadResource, map[string]string{"server": argv[0], "uri": argv[1]})
		}),
	}
	for _, c := range []*cobra.Command{list, templates} {
		c.Flags().StringVar(&cursor, "cursor", "", "continue a listing from the server's `CURSOR`")
	}
	for _, c := range []*cobra.Command{list, templates, read} {
		c.Flags().BoolVar(&asJSON, "json", false, "print the canonical result as JSON")
	}
	return group("resources", "List and read MCP server resources", list, templates, read)
}

func withCursor(m map[string]string, cursor string) map[string]string {
	if cursor != "" {
		m["cursor"] = cursor
	}
	return m
}
