package app

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/internal/termsafe"

	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/hostview"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/toolsearch"
)

// toolsSearchCommand is `tools search QUERY`: the tool search index over the live fleet, or
// over a catalog file without starting anything.
func (a *invocation) toolsSearchCommand() *cobra.Command {
	var (
		asJSON  bool
		catalog string
		server  string
		limit   int
		schemas int
		queries []string
	)
	cmd := &cobra.Command{
		Use:   "search QUERY... | -q QUERY [-q QUERY]...",
		Short: "Search the tools by what you want to do (the tool_search ranking)",
		Long: `Rank the tools for a task written in words (any language; typos, identifiers and
paraphrases are fine), best first: score, public name, server and tool name, purpose.
With --catalog FILE the tools come from a catalog file ({"servers": {"NAME": {"tools":
[Tool...]}}}, docs/tool-search.md) and nothing is started; otherwise from the profile's
fleet. --json prints an array of hits: server, name (as its server lists it), publicName,
purpose, score, the other servers that offer the same tool (also), and inputSchema for the
first --schemas hits. Each -q QUERY is one need of several (the steps of a task), ranked on
its own: one table per query, and with --json an array of {"query", "tools"}.`,
		Args: args(func(cmd *cobra.Command, argv []string) error {
			if len(queries) > 0 {
				return nil
			}
			return cobra.MinimumNArgs(1)(cmd, argv)
		}),
		RunE: action(func(cmd *cobra.Command, argv []string) error {
			all := slices.Clone(queries)
			if len(argv) > 0 {
				all = append(all, strings.Join(argv, " "))
			}
			if limit < 1 {
				return usageErrorf("tools search: --limit must be at least 1, got %d", limit)
			}
			opts := toolsearch.SearchOptions{Limit: limit, Server: server, Schemas: schemas}
			search := func(servers []toolsearch.Server, where string) error {
				if server != "" {
					var names []string
					found := false
					for _, s := range servers {
						names = append(names, s.Name)
						found = found || s.Name == server
					}
					if !found {
						return &host.UnknownServerError{Name: server, Where: where, Known: names}
					}
				}
				ix := toolsearch.New(servers)
				results := make([]toolsearch.QueryHits, len(all))
				for i, q := range all {
					results[i] = toolsearch.QueryHits{Query: q, Hits: ix.Search(q, opts)}
					if results[i].Hits == nil {
						results[i].Hits = []toolsearch.Hit{}
					}
				}
				if len(results) == 1 {
					if asJSON {
						return writeJSON(a, results[0].Hits)
					}
					return writeHits(a, results[0].Hits)
				}
				if asJSON {
					return writeJSON(a, results)
				}
				for i, r := range results {
					if i > 0 {
						fmt.Fprintln(a.stdout)
					}
					fmt.Fprintf(a.stdout, "%s\n", termsafe.String(fmt.Sprintf("For %q:", r.Query)))
					if err := writeHits(a, r.Hits); err != nil {
						return err
					}
				}
				return nil
			}
			if catalog != "" {
				servers, err := toolsearch.ReadCatalog(catalog)
				if err != nil {
					return usageErrorf("tools search: %v", err)
				}
				for i := range servers {
					for j := range servers[i].Tools {
						t := &servers[i].Tools[j]
						if t.PublicName == "" {
							t.PublicName = mcpclient.PublicToolName(servers[i].Name, t.Name)
						}
					}
				}
				return search(servers, fmt.Sprintf("in catalog %s", catalog))
			}
			return a.withHost(cmd.Context(), func(_ context.Context, h *host.Host) error {
				reg, err := host.Service(h, toolregistry.Key, "tool registry", "toolregistry")
				if err != nil {
					return err
				}
				tools := reg.List(h.Root())
				return search(toolsearch.FromRegistry(tools, serverInstructions(h.Root(), tools)), fmt.Sprintf("in profile %q", h.Profile().Source))
			})
		}),
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print the hits as a JSON array")
	f.StringVar(&catalog, "catalog", "", "search the tools of a catalog `FILE` instead of the profile's servers (starts nothing)")
	f.StringVar(&server, "server", "", "only the tools of this server")
	f.IntVar(&limit, "limit", toolsearch.DefaultLimit, "the most hits to print")
	f.IntVar(&schemas, "schemas", 0, "with --json, how many of the best hits carry their inputSchema")
	f.StringArrayVarP(&queries, "query", "q", nil, "one need of several, ranked on its own (repeat for each)")
	return cmd
}

// writeHits prints search hits as aligned columns.
func writeHits(a *invocation, hits []toolsearch.Hit) error {
	rows := make([][]string, 0, len(hits))
	for _, h := range hits {
		where := hostview.Dash(h.Server) + "/" + h.Name
		if len(h.Also) > 0 {
			where += " (also " + strings.Join(h.Also, ", ") + ")"
		}
		rows = append(rows, []string{fmt.Sprintf("%.2f", h.Score), h.PublicName, where, hostview.Summary(h.Purpose, 72)})
	}
	return writeColumns(a, "no tool matches", []string{"SCORE", "NAME", "SERVER/TOOL", "PURPOSE"}, rows)
}

// serverInstructions returns the instructions of the MCP servers of tools, as their clients
// visible from c have them, for the search's ranking.
func serverInstructions(c *ctx.Context, tools []toolregistry.Info) map[string]string {
	out := map[string]string{}
	for _, t := range tools {
		if server := t.Meta["server"]; server != "" {
			if _, ok := out[server]; !ok {
				out[server] = mcpclient.InstructionsOf(c, server)
			}
		}
	}
	return out
}
