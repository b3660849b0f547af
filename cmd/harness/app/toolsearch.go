package app

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/hostclient"
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
[Tool...]}}}, docs/tool-search.md) and nothing is started; otherwise from the fleet of
the running host (harness run), as tools list answers for it, else the profile's. --json prints an array of hits: server, name (as its server lists it), publicName,
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
			p := host.SearchParams{Queries: all, Server: server, Limit: limit, Schemas: schemas}
			if catalog != "" {
				servers, err := host.ReadCatalog(catalog)
				if err != nil {
					return usageErrorf("tools search: %v", err)
				}
				results, err := host.SearchTools(servers, p, fmt.Sprintf("in catalog %s", catalog))
				if err != nil {
					return &exitError{code: ExitUsage, err: err} // an unknown --server, as on the fleet
				}
				return a.out().Search(results, asJSON)
			}
			// The fleet's tools: a running host's, as tools list answers for it, else this
			// process's.
			return a.withCaller(cmd.Context(), func(cx context.Context, c *hostclient.Caller) error {
				results, err := host.MethodSearchTools.Call(cx, c, p)
				if err != nil {
					return refused(cx, c, server, err)
				}
				return a.out().Search(results, asJSON)
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
