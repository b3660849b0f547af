package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/internal/termsafe"
	"github.com/cordisgo/harness/plugins/mcpresources"
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
	var cursor, output string
	call := func(cmd *cobra.Command, tool string, params map[string]string) error {
		raw, err := json.Marshal(params)
		if err != nil {
			return err
		}
		return a.withRegistry(cmd.Context(), func(cx context.Context, h *host.Host, reg *toolregistry.Registry) error {
			if _, ok := reg.Lookup(h.Root(), tool); !ok {
				return fmt.Errorf("no %s tool at the root: the profile needs a %s row and an MCP server with resources", tool, resourcesPluginRowUse)
			}
			res, terr := reg.Execute(cx, h.Root(), tool, raw, toolregistry.ExecOptions{})
			switch {
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
			return a.withRegistry(cmd.Context(), func(cx context.Context, h *host.Host, reg *toolregistry.Registry) error {
				return a.listEveryServer(cx, h, reg, tool, asJSON)
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

// listEveryServer runs a listing tool for every server with resources visible at the root
// and prints one table with a SERVER column (or, with asJSON, {"resources" or
// "resourceTemplates": [... each with its "server"], "errors": [{"server", "error"}]}). A
// server that fails is reported and the others are listed; only first pages are shown, with
// the command that continues a longer one.
func (a *invocation) listEveryServer(cx context.Context, h *host.Host, reg *toolregistry.Registry, tool string, asJSON bool) error {
	if _, ok := reg.Lookup(h.Root(), tool); !ok {
		return fmt.Errorf("no %s tool at the root: the profile needs a %s row and an MCP server with resources", tool, resourcesPluginRowUse)
	}
	svc, ok := mcpresources.Key.Get(h.Root())
	if !ok {
		return fmt.Errorf("no %s service at the root: the profile needs a %s row", mcpresources.Key.Name(), resourcesPluginRowUse)
	}
	key, cmd, none := "resources", "list", "no resources"
	if tool == toolListTemplates {
		key, cmd, none = "resourceTemplates", "templates", "no resource templates"
	}
	type serverError struct {
		Server string `json:"server"`
		Error  string `json:"error"`
	}
	items, errs := []map[string]any{}, []serverError{}
	for _, server := range svc.Servers(h.Root()) {
		raw, _ := json.Marshal(map[string]string{"server": server})
		res, terr := reg.Execute(cx, h.Root(), tool, raw, toolregistry.ExecOptions{})
		if terr != nil {
			errs = append(errs, serverError{server, terr.Error()})
			continue
		}
		var page map[string]json.RawMessage
		if err := json.Unmarshal(res.Raw, &page); err != nil {
			return fmt.Errorf("reading the %s result of %q: %w", tool, server, err)
		}
		var listed []map[string]any
		var next string
		_ = json.Unmarshal(page[key], &listed)
		_ = json.Unmarshal(page["nextCursor"], &next)
		for _, it := range listed {
			it["server"] = server
			items = append(items, it)
		}
		if next != "" && !asJSON {
			errorf(a.stderr, a.prog, "%s has more: harness resources %s %s --cursor %s", server, cmd, server, next)
		}
	}
	if asJSON {
		return writeJSON(a, map[string]any{key: items, "errors": errs})
	}
	for _, e := range errs {
		errorf(a.stderr, a.prog, "%s: %s", e.Server, e.Error)
	}
	str := func(m map[string]any, k string) string {
		v, _ := m[k].(string)
		return dash(v)
	}
	if len(items) == 0 {
		fmt.Fprintln(a.stderr, none)
		return nil
	}
	var rows [][]string
	if key == "resources" {
		rows = [][]string{{"SERVER", "URI", "NAME", "MIME TYPE", "SIZE"}}
		for _, it := range items {
			size := "-"
			if n, ok := it["size"].(float64); ok {
				size = byteSize(int64(n))
			}
			rows = append(rows, []string{str(it, "server"), str(it, "uri"), str(it, "name"), str(it, "mimeType"), size})
		}
	} else {
		rows = [][]string{{"SERVER", "URI TEMPLATE", "NAME", "MIME TYPE", "DESCRIPTION"}}
		for _, it := range items {
			d, _ := it["description"].(string)
			rows = append(rows, []string{str(it, "server"), str(it, "uriTemplate"), str(it, "name"), str(it, "mimeType"), host.JoinLines(d)})
		}
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
	var res struct {
		Resources []struct {
			URI      string `json:"uri"`
			Name     string `json:"name"`
			Title    string `json:"title"`
			MIMEType string `json:"mimeType"`
			Size     *int64 `json:"size"`
		} `json:"resources"`
		ResourceTemplates []struct {
			URITemplate string `json:"uriTemplate"`
			Name        string `json:"name"`
			MIMEType    string `json:"mimeType"`
			Description string `json:"description"`
		} `json:"resourceTemplates"`
		Contents []struct {
			URI      string  `json:"uri"`
			MIMEType string  `json:"mimeType"`
			Text     *string `json:"text"`
			Blob     []byte  `json:"blob"`
		} `json:"contents"`
		NextCursor string `json:"nextCursor"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("reading the %s result: %w", tool, err)
	}
	more := func() {
		if res.NextCursor != "" {
			errorf(a.stderr, a.prog, "more: continue with --cursor %s", res.NextCursor)
		}
	}
	switch tool {
	case toolListResources:
		if len(res.Resources) == 0 {
			fmt.Fprintln(a.stderr, "no resources")
			return nil
		}
		rows := [][]string{{"URI", "NAME", "MIME TYPE", "SIZE"}}
		for _, r := range res.Resources {
			size := "-"
			if r.Size != nil {
				size = byteSize(*r.Size)
			}
			rows = append(rows, []string{r.URI, dash(r.Name), dash(r.MIMEType), size})
		}
		if err := a.printTable(rows); err != nil {
			return err
		}
		more()
		return nil
	case toolListTemplates:
		if len(res.ResourceTemplates) == 0 {
			fmt.Fprintln(a.stderr, "no resource templates")
			return nil
		}
		rows := [][]string{{"URI TEMPLATE", "NAME", "MIME TYPE", "DESCRIPTION"}}
		for _, r := range res.ResourceTemplates {
			rows = append(rows, []string{r.URITemplate, dash(r.Name), dash(r.MIMEType), host.JoinLines(r.Description)})
		}
		if err := a.printTable(rows); err != nil {
			return err
		}
		more()
		return nil
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
	if isTerminal(a.stdout) {
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
