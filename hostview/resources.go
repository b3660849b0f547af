package hostview

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/plugins/mcpresources"
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
