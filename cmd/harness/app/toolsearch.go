package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/host"

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
	)
	cmd := &cobra.Command{
		Use:   "search QUERY...",
		Short: "Search the tools by what you want to do (the tool_search ranking)",
		Long: `Rank the tools for a task written in words (any language; typos, identifiers and
paraphrases are fine), best first: score, public name, server and tool name, purpose.
With --catalog FILE the tools come from a catalog file ({"servers": {"NAME": {"tools":
[Tool...]}}}, docs/tool-search.md) and nothing is started; otherwise from the profile's
fleet. --json prints an array of hits: server, name (as its server lists it), publicName,
purpose, score, and inputSchema for the first --schemas hits.`,
		Args: args(cobra.MinimumNArgs(1)),
		RunE: action(func(cmd *cobra.Command, argv []string) error {
			query := strings.Join(argv, " ")
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
				hits := toolsearch.New(servers).Search(query, opts)
				if asJSON {
					if hits == nil {
						hits = []toolsearch.Hit{}
					}
					return writeJSON(a, hits)
				}
				return writeHits(a, hits)
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
	return cmd
}

// writeHits prints search hits as aligned columns.
func writeHits(a *invocation, hits []toolsearch.Hit) error {
	rows := make([][]string, 0, len(hits))
	for _, h := range hits {
		rows = append(rows, []string{fmt.Sprintf("%.2f", h.Score), h.PublicName, hostview.Dash(h.Server) + "/" + h.Name, hostview.Summary(h.Purpose, 72)})
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
