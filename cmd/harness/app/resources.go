package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/internal/termsafe"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/termui"
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
	var cursor, output string
	call := func(cmd *cobra.Command, tool string, params map[string]string) error {
		raw, err := json.Marshal(params)
		if err != nil {
			return err
		}
		return a.withCaller(cmd.Context(), func(cx context.Context, c *hostCaller) error {
			res, terr, err := c.resourceTool(cx, tool, raw)
			switch {
			case err != nil:
				return err
			case terr != nil || res == nil || len(res.Raw) == 0:
				// A refusal or a tool error: the registry's words.
				if asJSON {
					if err := writeJSON(a, canonical(res)); err != nil {
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
				return writeJSON(a, withoutEmpty(res.Raw))
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
			return a.withCaller(cmd.Context(), func(cx context.Context, c *hostCaller) error {
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

// resourceTool calls one of the resource tools at the host's root: the registry's result
// and error, or the error of a host whose root has no such tool, or that refused the call.
func (c *hostCaller) resourceTool(cx context.Context, tool string, args json.RawMessage) (*toolregistry.Result, error, error) {
	out, err := host.MethodCallTool.Call(cx, c, host.CallParams{Tool: tool, Args: args})
	switch {
	case err != nil:
		return nil, nil, c.refused(cx, "", err)
	case out.Error != nil && out.Error.Code == toolregistry.CodeUnknownTool && out.Error.Tool == tool:
		return nil, nil, noResourceTool(tool)
	}
	return out.Result, out.Err(), nil
}

// noResourceTool is the error of a profile whose root has no tool (a resource tool).
func noResourceTool(tool string) error {
	return fmt.Errorf("no %s tool at the root: the profile needs a %s row and an MCP server with resources", tool, resourcesPluginRowUse)
}

// resourceListing is a listing tool's protocol result, as the tables read it.
type resourceListing struct {
	Resources []struct {
		URI      string `json:"uri"`
		Name     string `json:"name"`
		MIMEType string `json:"mimeType"`
		Size     *int64 `json:"size"`
	} `json:"resources"`
	ResourceTemplates []struct {
		URITemplate string `json:"uriTemplate"`
		Name        string `json:"name"`
		MIMEType    string `json:"mimeType"`
		Description string `json:"description"`
	} `json:"resourceTemplates"`
	NextCursor string `json:"nextCursor"`
}

// listingTable is the table of a listing tool's results: one server's, or with server
// names (servers[i] for pages[i]) a SERVER column first. It is nil when nothing is listed.
func listingTable(tool string, pages []resourceListing, servers []string) [][]string {
	var rows [][]string
	for i, l := range pages {
		var cells [][]string
		if tool == toolListTemplates {
			for _, r := range l.ResourceTemplates {
				cells = append(cells, []string{r.URITemplate, dash(r.Name), dash(r.MIMEType), host.JoinLines(r.Description)})
			}
		} else {
			for _, r := range l.Resources {
				size := "-"
				if r.Size != nil {
					size = byteSize(*r.Size)
				}
				cells = append(cells, []string{r.URI, dash(r.Name), dash(r.MIMEType), size})
			}
		}
		for _, c := range cells {
			if servers != nil {
				c = append([]string{servers[i]}, c...)
			}
			rows = append(rows, c)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	header := []string{"URI", "NAME", "MIME TYPE", "SIZE"}
	if tool == toolListTemplates {
		header = []string{"URI TEMPLATE", "NAME", "MIME TYPE", "DESCRIPTION"}
	}
	if servers != nil {
		header = append([]string{"SERVER"}, header...)
	}
	return append([][]string{header}, rows...)
}

// nothingListed is what a listing with no rows says.
func nothingListed(tool string) string {
	if tool == toolListTemplates {
		return "no resource templates"
	}
	return "no resources"
}

// listEveryServer runs a listing tool for every server with resources visible at the root
// and prints one table with a SERVER column (or, with asJSON, {"resources" or
// "resourceTemplates": [... each with its "server"], "errors": [{"server", "error"}]}). A
// server that fails is reported and the others are listed; only first pages are shown, with
// the command that continues a longer one.
func (a *invocation) listEveryServer(cx context.Context, c *hostCaller, tool string, asJSON bool) error {
	tools, err := host.MethodTools.Call(cx, c, struct{}{})
	if err != nil {
		return c.refused(cx, "", err)
	}
	if !slices.ContainsFunc(tools, func(t toolregistry.Info) bool { return t.Name == tool }) {
		return noResourceTool(tool)
	}
	listed, err := host.MethodResourceServers.Call(cx, c, struct{}{})
	if err != nil {
		return c.refused(cx, "", err)
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
		pages   []resourceListing    // without
		servers []string
	)
	for _, server := range listed {
		raw, _ := json.Marshal(map[string]string{"server": server})
		res, terr, err := c.resourceTool(cx, tool, raw)
		if err != nil {
			return err
		}
		if terr != nil {
			errs = append(errs, serverError{server, terr.Error()})
			continue
		}
		if asJSON {
			var page map[string]json.RawMessage
			var listed []map[string]any
			if err := json.Unmarshal(res.Raw, &page); err != nil {
				return fmt.Errorf("reading the %s result of %q: %w", tool, server, err)
			}
			_ = json.Unmarshal(page[key], &listed)
			for _, it := range listed {
				it["server"] = server
				items = append(items, it)
			}
			continue
		}
		var l resourceListing
		if err := json.Unmarshal(res.Raw, &l); err != nil {
			return fmt.Errorf("reading the %s result of %q: %w", tool, server, err)
		}
		pages, servers = append(pages, l), append(servers, server)
		if l.NextCursor != "" {
			errorf(a.stderr, a.prog, "%s has more: harness resources %s %s --cursor %s", server, cmd, server, l.NextCursor)
		}
	}
	if asJSON {
		return writeJSON(a, map[string]any{key: items, "errors": errs})
	}
	for _, e := range errs {
		errorf(a.stderr, a.prog, "%s: %s", e.Server, e.Error)
	}
	rows := listingTable(tool, pages, servers)
	if rows == nil {
		fmt.Fprintln(a.stderr, nothingListed(tool))
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
		var l resourceListing
		if err := json.Unmarshal(raw, &l); err != nil {
			return fmt.Errorf("reading the %s result: %w", tool, err)
		}
		rows := listingTable(tool, []resourceListing{l}, nil)
		if rows == nil {
			fmt.Fprintln(a.stderr, nothingListed(tool))
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
	var res struct {
		Contents []struct {
			URI      string  `json:"uri"`
			MIMEType string  `json:"mimeType"`
			Text     *string `json:"text"`
			Blob     []byte  `json:"blob"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("reading the %s result: %w", tool, err)
	}
	var out []byte
	for _, c := range res.Contents {
		switch {
		case c.Text != nil:
			out = append(out, *c.Text...)
		case output == "":
			errorf(a.stderr, a.prog, "%s: %s binary contents (%s) not written to the terminal; save them with --output FILE",
				c.URI, dash(c.MIMEType), byteSize(int64(len(c.Blob))))
		default:
			out = append(out, c.Blob...)
		}
	}
	if output != "" {
		if err := os.WriteFile(output, out, 0o644); err != nil {
			return fmt.Errorf("--output: %w", err)
		}
		errorf(a.stderr, a.prog, "wrote %s to %s", byteSize(int64(len(out))), output)
		return nil
	}
	if termui.IsTerminal(a.stdout) {
		// On a terminal, the server's text is shown safe; redirected, it is the file as it is.
		_, err := io.WriteString(a.stdout, termsafe.String(string(out)))
		return err
	}
	_, err := a.stdout.Write(out)
	return err
}

// byteSize renders n bytes for people: 793 B, 12.4 KiB, 3.1 MiB.
func byteSize(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1024*1024))
}

// withoutEmpty returns a protocol result without its empty fields (null, "", {}, [] and a
// zero ttlMs), which are noise for people reading --json; everything else is kept as the
// server sent it, in its order.
func withoutEmpty(raw json.RawMessage) any {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return raw
	}
	var prune func(v any) any
	prune = func(v any) any {
		switch t := v.(type) {
		case map[string]any:
			for k, x := range t {
				x = prune(x)
				switch y := x.(type) {
				case nil:
					delete(t, k)
					continue
				case string:
					if y == "" {
						delete(t, k)
						continue
					}
				case map[string]any:
					if len(y) == 0 {
						delete(t, k)
						continue
					}
				case []any:
					if len(y) == 0 && k != "resources" && k != "resourceTemplates" && k != "contents" {
						delete(t, k)
						continue
					}
				case json.Number:
					if k == "ttlMs" && y.String() == "0" {
						delete(t, k)
						continue
					}
				}
				t[k] = x
			}
		case []any:
			for i := range t {
				t[i] = prune(t[i])
			}
		}
		return v
	}
	return prune(v)
}
