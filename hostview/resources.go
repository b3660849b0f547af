package hostview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/hostclient"
	"github.com/cordisgo/harness/internal/termsafe"
	"github.com/cordisgo/harness/plugins/mcpresources"
	"github.com/cordisgo/harness/termui"
)

// Listing is a listing tool's protocol result, as the tables read it.
type Listing struct {
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

// ListingTable is the table of a listing tool's results: one server's, or with server
// names (servers[i] for pages[i]) a SERVER column first. It is nil when nothing is listed.
func ListingTable(tool string, pages []Listing, servers []string) [][]string {
	var rows [][]string
	for i, l := range pages {
		var cells [][]string
		if tool == mcpresources.ToolTemplates {
			for _, r := range l.ResourceTemplates {
				cells = append(cells, []string{r.URITemplate, Dash(r.Name), Dash(r.MIMEType), host.JoinLines(r.Description)})
			}
		} else {
			for _, r := range l.Resources {
				size := "-"
				if r.Size != nil {
					size = ByteSize(*r.Size)
				}
				cells = append(cells, []string{r.URI, Dash(r.Name), Dash(r.MIMEType), size})
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
	if tool == mcpresources.ToolTemplates {
		header = []string{"URI TEMPLATE", "NAME", "MIME TYPE", "DESCRIPTION"}
	}
	if servers != nil {
		header = append([]string{"SERVER"}, header...)
	}
	return append([][]string{header}, rows...)
}

// NothingListed is what a listing with no rows says.
func NothingListed(tool string) string {
	if tool == mcpresources.ToolTemplates {
		return "no resource templates"
	}
	return "no resources"
}

// ByteSize renders n bytes for people: 793 B, 12.4 KiB, 3.1 MiB.
func ByteSize(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1024*1024))
}

// WithoutEmpty returns a protocol result without its empty fields (null, "", {}, [] and a
// zero ttlMs), which are noise for people reading --json; everything else is kept as the
// server sent it, in its order.
func WithoutEmpty(raw json.RawMessage) any {
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

// Contents is one block of a read resource (resources/read): text, or a binary blob.
type Contents struct {
	URI      string  `json:"uri"`
	MIMEType string  `json:"mimeType"`
	Text     *string `json:"text"`
	Blob     []byte  `json:"blob"`
}

// ReadContents reads the contents of a read tool's protocol result (read_mcp_resource).
func ReadContents(raw json.RawMessage) ([]Contents, error) {
	var res struct {
		Contents []Contents `json:"contents"`
	}
	err := json.Unmarshal(raw, &res)
	return res.Contents, err
}

// EveryServer writes the listing of tool (list_mcp_resources, list_mcp_resource_templates)
// for every server with resources (hostclient.Caller.ListEveryServer): one table with a
// SERVER column, a note for each server that failed and for each that has more (the command
// that continues it); with asJSON, {"resources" or "resourceTemplates": [... each with its
// "server"], "errors": [{"server", "error"}]}.
func (o Output) EveryServer(tool string, listed []hostclient.ServerListing, asJSON bool) error {
	key, cmd := "resources", "list"
	if tool == mcpresources.ToolTemplates {
		key, cmd = "resourceTemplates", "templates"
	}
	type serverError struct {
		Server string `json:"server"`
		Error  string `json:"error"`
	}
	var (
		errs    = []serverError{}
		items   = []map[string]any{} // with asJSON
		pages   []Listing            // without
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
		var p Listing
		if err := json.Unmarshal(l.Raw, &p); err != nil {
			return fmt.Errorf("reading the %s result of %q: %w", tool, l.Server, err)
		}
		pages, servers = append(pages, p), append(servers, l.Server)
		if p.NextCursor != "" {
			o.Note("%s has more: harness resources %s %s --cursor %s", l.Server, cmd, l.Server, p.NextCursor)
		}
	}
	if asJSON {
		return o.JSON(map[string]any{key: items, "errors": errs})
	}
	for _, e := range errs {
		o.Note("%s: %s", e.Server, e.Error)
	}
	_, err := o.listing(tool, pages, servers)
	return err
}

// listing writes the table of pages (ListingTable), or on Notes that nothing is listed
// (listed false).
func (o Output) listing(tool string, pages []Listing, servers []string) (listed bool, err error) {
	rows := ListingTable(tool, pages, servers)
	if rows == nil {
		fmt.Fprintln(o.Notes, NothingListed(tool))
		return false, nil
	}
	return true, o.Table(rows)
}

// Resource writes a resource tool's protocol result: the table of a listing (and a note
// when the server has more), the contents themselves for a read: text on Out as it is, so
// that `> file` gives the file (shown safe on a terminal); binary contents to file when it
// is set (a note says how much), else a note that says how to save them.
func (o Output) Resource(tool string, raw json.RawMessage, file string) error {
	if tool == mcpresources.ToolList || tool == mcpresources.ToolTemplates {
		var l Listing
		if err := json.Unmarshal(raw, &l); err != nil {
			return fmt.Errorf("reading the %s result: %w", tool, err)
		}
		listed, err := o.listing(tool, []Listing{l}, nil)
		if listed && err == nil && l.NextCursor != "" {
			o.Note("more: continue with --cursor %s", l.NextCursor)
		}
		return err
	}
	contents, err := ReadContents(raw)
	if err != nil {
		return fmt.Errorf("reading the %s result: %w", tool, err)
	}
	var out []byte
	for _, c := range contents {
		switch {
		case c.Text != nil:
			out = append(out, *c.Text...)
		case file == "":
			o.Note("%s: %s binary contents (%s) not written to the terminal; save them with --output FILE",
				c.URI, Dash(c.MIMEType), ByteSize(int64(len(c.Blob))))
		default:
			out = append(out, c.Blob...)
		}
	}
	if file != "" {
		if err := os.WriteFile(file, out, 0o644); err != nil {
			return fmt.Errorf("--output: %w", err)
		}
		o.Note("wrote %s to %s", ByteSize(int64(len(out))), file)
		return nil
	}
	if termui.IsTerminal(o.Out) {
		// On a terminal, the server's text is shown safe; redirected, it is the file as it is.
		_, err := io.WriteString(o.Out, termsafe.String(string(out)))
		return err
	}
	_, err = o.Out.Write(out)
	return err
}

// Update is one update of a watched resource (host.ResourceUpdate) as `resources watch
// --json` prints it: with the resource's new contents, or the error of reading them.
type Update struct {
	Time     time.Time       `json:"time"`
	Server   string          `json:"server"`
	URI      string          `json:"uri"`
	Contents json.RawMessage `json:"contents,omitempty"`
	Error    string          `json:"error,omitempty"`
}

// Update writes one update: with asJSON one JSON object on a line; otherwise a line with
// the time, the server and the URI, followed by the contents read (read, a read tool's
// protocol result) or a note with the error of reading them.
func (o Output) Update(u Update, read json.RawMessage, asJSON bool) error {
	if read != nil {
		var body struct {
			Contents json.RawMessage `json:"contents"`
		}
		if err := json.Unmarshal(read, &body); err == nil {
			u.Contents = body.Contents
		}
	}
	if asJSON {
		b, err := JSON(u, "")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(o.Out, "%s\n", b)
		return err
	}
	fmt.Fprintf(o.Out, "%s  %s  %s\n", u.Time.Format(time.RFC3339), u.Server, u.URI)
	if u.Error != "" {
		o.Note("reading %s: %s", u.URI, u.Error)
		return nil
	}
	if read != nil {
		if err := o.Resource(mcpresources.ToolRead, read, ""); err != nil {
			return err
		}
		fmt.Fprintln(o.Out)
	}
	return nil
}
