package hostview

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/internal/termsafe"
	"github.com/cordisgo/harness/internal/words"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/toolsearch"
)

// Canonical is the machine-readable form of a result: the tool's own
// protocol JSON when it kept one (an MCP CallToolResult), else the
// registry's result.
func Canonical(res *toolregistry.Result) any {
	if res != nil && len(res.Raw) > 0 {
		return res.Raw
	}
	return res
}

// Call writes a tool call's outcome (tools call): with asJSON its canonical result
// ([CanonicalCall]), else the tool's text output, shown safe, when the tool produced it (a
// result, or the tool's own error; the registry's refusals are only the returned error).
// It returns the call's error.
func (o Output) Call(out host.CallResult, asJSON bool) error {
	res, terr := out.Result, out.Err()
	if asJSON {
		if err := o.JSON(CanonicalCall(res, terr)); err != nil {
			return err
		}
	} else if text := res.Text(); text != "" && (out.Error == nil || out.Error.Code == toolregistry.CodeToolError) {
		fmt.Fprintln(o.Out, termsafe.String(text))
	}
	return terr
}

// CanonicalCall is the --json form of a call's outcome: Canonical(res),
// and when the registry itself refused or failed the call (the result has
// no protocol JSON of the tool's own), the registry's error under "error"
// with its code, such as {"code": "invalid_arguments", ...}.
func CanonicalCall(res *toolregistry.Result, terr error) any {
	var te *toolregistry.ToolError
	if res == nil || len(res.Raw) > 0 || !errors.As(terr, &te) {
		return Canonical(res)
	}
	b, err := json.Marshal(res)
	if err != nil {
		return Canonical(res)
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil || m == nil {
		return Canonical(res)
	}
	m["error"] = te
	return m
}

// Summary returns the first line of s, cut to at most n runes.
func Summary(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return words.Clip(s, n)
}

// ViewMark starts the description of a tool with an interactive view in a list, and
// ViewNote says under the list what it means and how to open one.
const (
	ViewMark = "[view] "
	ViewNote = "[view]: the tool has an interactive view (an MCP App): the management page shows it (harness open) under a call from its card, and under a chat's call in the Chat view"
)

// HasView reports whether the tool has an interactive view: its server names a ui://
// resource for it (_meta.ui, an MCP App), which the management page renders.
func HasView(in toolregistry.Info) bool { return in.Meta[mcpclient.MetaUIResource] != "" }

// Tools prints tools as aligned columns (name, server, description), a tool with an
// interactive view marked (ViewMark) and ViewNote after the table.
func (o Output) Tools(tools []toolregistry.Info) error {
	rows := make([][]string, 0, len(tools))
	views := false
	for _, t := range tools {
		desc := Summary(t.Description, 72)
		if HasView(t) {
			desc, views = ViewMark+desc, true
		}
		rows = append(rows, []string{t.Name, Dash(t.Meta["server"]), desc})
	}
	if err := o.Columns("no tools", []string{"NAME", "SERVER", "DESCRIPTION"}, rows); err != nil || !views {
		return err
	}
	_, err := fmt.Fprintf(o.Out, "\n%s\n", ViewNote)
	return err
}

// Search prints the hits of a tool search: one table (or JSON array of hits) for one query;
// for several, a table per query under its words, or a JSON array of {"query", "tools"}.
func (o Output) Search(results []toolsearch.QueryHits, asJSON bool) error {
	if len(results) == 1 {
		if asJSON {
			return o.JSON(results[0].Hits)
		}
		return o.hits(results[0].Hits)
	}
	if asJSON {
		return o.JSON(results)
	}
	for i, r := range results {
		if i > 0 {
			fmt.Fprintln(o.Out)
		}
		fmt.Fprintf(o.Out, "%s\n", termsafe.String(fmt.Sprintf("For %q:", r.Query)))
		if err := o.hits(r.Hits); err != nil {
			return err
		}
	}
	return nil
}

// hits prints search hits as aligned columns.
func (o Output) hits(hits []toolsearch.Hit) error {
	rows := make([][]string, 0, len(hits))
	for _, h := range hits {
		where := Dash(h.Server) + "/" + h.Name
		if len(h.Also) > 0 {
			where += " (also " + strings.Join(h.Also, ", ") + ")"
		}
		rows = append(rows, []string{fmt.Sprintf("%.2f", h.Score), h.PublicName, where, Summary(h.Purpose, 72)})
	}
	return o.Columns("no tool matches", []string{"SCORE", "NAME", "SERVER/TOOL", "PURPOSE"}, rows)
}
