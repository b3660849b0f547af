package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/hostclient"
	"github.com/cordisgo/harness/hostview"
	"github.com/cordisgo/harness/internal/termsafe"
	"github.com/cordisgo/harness/plugins/mcpresources"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/termui"
)

// The shared resource tools the mcpresources plugin registers; the
// resources commands call them through the registry like a model would,
// so they see exactly what an agent at the root sees.
const (
	toolListResources     = mcpresources.ToolList
	toolListTemplates     = mcpresources.ToolTemplates
	toolReadResource      = mcpresources.ToolRead
	resourcesPluginRowUse = "mcpresources"
)

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
					if err := writeJSON(a, hostview.Canonical(res)); err != nil {
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
				return writeJSON(a, hostview.WithoutEmpty(res.Raw))
			}
			return a.printResources(tool, res.Raw, output)
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
		RunE:  action(listing(toolListResources)),
	}
	templates := &cobra.Command{
		Use:   "templates [SERVER]",
		Short: "List the resource templates of the MCP servers (or of one)",
		Args:  args(cobra.MaximumNArgs(1)),
		RunE:  action(listing(toolListTemplates)),
	}
	read := &cobra.Command{
		Use:   "read SERVER URI",
		Short: "Read one resource of a server: its text to stdout; binary contents with --output FILE",
		Args:  args(cobra.ExactArgs(2)),
		RunE: action(func(cmd *cobra.Command, argv []string) error {
			return call(cmd, toolReadResource, map[string]string{"server": argv[0], "uri": argv[1]})
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
		return fmt.Errorf("no %s tool at the root: the profile needs a %s row and an MCP server with resources", tool, resourcesPluginRowUse)
	}
	if err != nil {
		return refused(cx, c, "", err)
	}
	return nil
}

// listEveryServer runs a listing tool for every server with resources visible at the root
// and prints one table with a SERVER column (or, with asJSON, {"resources" or
// "resourceTemplates": [... each with its "server"], "errors": [{"server", "error"}]}). A
// server that fails is reported and the others are listed; only first pages are shown, with
// the command that continues a longer one.
func (a *invocation) listEveryServer(cx context.Context, c *hostclient.Caller, tool string, asJSON bool) error {
	listed, err := c.ListEveryServer(cx, tool)
	if err != nil {
		return resourceRefusal(cx, c, tool, err)
	}
	key, cmd := "resources", "list"
	if tool == toolListTemplates {
		key, cmd = "resourceTemplates", "templates"
	}
	type serverError struct {
		Server string `json:"server"`
		Error  string `json:"error"`
	}
	var (
		errs    = []serverError{}
		items   = []map[string]any{} // with asJSON
		pages   []hostview.Listing   // without
		servers []string
	)
	for _, l := range listed {
		if l.Err != "" {
			errs = append(errs, serverError{l.Server, l.Err})
			continue
		}
		if asJSON {
			var page map[string]json.RawMessage
			var items1 []map[string]any
			if err := json.Unmarshal(l.Raw, &page); err != nil {
				return fmt.Errorf("reading the %s result of %q: %w", tool, l.Server, err)
			}
			_ = json.Unmarshal(page[key], &items1)
			for _, it := range items1 {
				it["server"] = l.Server
				items = append(items, it)
			}
			continue
		}
		var p hostview.Listing
		if err := json.Unmarshal(l.Raw, &p); err != nil {
			return fmt.Errorf("reading the %s result of %q: %w", tool, l.Server, err)
		}
		pages, servers = append(pages, p), append(servers, l.Server)
		if p.NextCursor != "" {
			errorf(a.stderr, a.prog, "%s has more: harness resources %s %s --cursor %s", l.Server, cmd, l.Server, p.NextCursor)
		}
	}
	if asJSON {
		return writeJSON(a, map[string]any{key: items, "errors": errs})
	}
	for _, e := range errs {
		errorf(a.stderr, a.prog, "%s: %s", e.Server, e.Error)
	}
	rows := hostview.ListingTable(tool, pages, servers)
	if rows == nil {
		fmt.Fprintln(a.stderr, hostview.NothingListed(tool))
		return nil
	}
	return a.printTable(rows)
}

func withCursor(m map[string]string, cursor string) map[string]string {
	if cursor != "" {
		m["cursor"] = cursor
	}
	return m
}

// printResources prints a resource tool's protocol result for people: a table for the
// listings, the contents themselves for a read (text to stdout as it is, so that `> file`
// gives the file; binary contents to --output FILE, described otherwise).
func (a *invocation) printResources(tool string, raw json.RawMessage, output string) error {
	if tool == toolListResources || tool == toolListTemplates {
		var l hostview.Listing
		if err := json.Unmarshal(raw, &l); err != nil {
			return fmt.Errorf("reading the %s result: %w", tool, err)
		}
		rows := hostview.ListingTable(tool, []hostview.Listing{l}, nil)
		if rows == nil {
			fmt.Fprintln(a.stderr, hostview.NothingListed(tool))
			return nil
		}
		if err := a.printTable(rows); err != nil {
			return err
		}
		if l.NextCursor != "" {
			errorf(a.stderr, a.prog, "more: continue with --cursor %s", l.NextCursor)
		}
		return nil
	}
	contents, err := hostview.ReadContents(raw)
	if err != nil {
		return fmt.Errorf("reading the %s result: %w", tool, err)
	}
	var out []byte
	for _, c := range contents {
		switch {
		case c.Text != nil:
			out = append(out, *c.Text...)
		case output == "":
			errorf(a.stderr, a.prog, "%s: %s binary contents (%s) not written to the terminal; save them with --output FILE",
				c.URI, hostview.Dash(c.MIMEType), hostview.ByteSize(int64(len(c.Blob))))
		default:
			out = append(out, c.Blob...)
		}
	}
	if output != "" {
		if err := os.WriteFile(output, out, 0o644); err != nil {
			return fmt.Errorf("--output: %w", err)
		}
		errorf(a.stderr, a.prog, "wrote %s to %s", hostview.ByteSize(int64(len(out))), output)
		return nil
	}
	if termui.IsTerminal(a.stdout) {
		// On a terminal, the server's text is shown safe; redirected, it is the file as it is.
		_, err := io.WriteString(a.stdout, termsafe.String(string(out)))
		return err
	}
	_, err = a.stdout.Write(out)
	return err
}
