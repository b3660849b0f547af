package host

import (
	"context"
	"fmt"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/remote"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/plugins/toolregistry/deferral"
	"github.com/cordisgo/harness/toolsearch"
)

// MethodSearchTools ranks the tools visible at the root for one or more queries with tool
// search's index (the servers' instructions included), as `harness tools search` prints
// them, on a running host or in process.
var MethodSearchTools = remote.NewMethod[SearchParams, []toolsearch.QueryHits]("harness/searchTools")

// SearchParams are the parameters of MethodSearchTools and [SearchTools]: the queries
// (each one need, ranked on its own), the server to keep to ("" for all), the most hits
// per query and how many of the best carry their input schema.
type SearchParams struct {
	Queries []string `json:"queries"`
	Server  string   `json:"server,omitempty"`
	Limit   int      `json:"limit,omitempty"`
	Schemas int      `json:"schemas,omitempty"`
}

// Validate requires a query and a limit that is not negative.
func (p SearchParams) Validate() error {
	var probs ctx.Problems
	if len(p.Queries) == 0 {
		probs.Add("queries", "required: what to search for")
	}
	if p.Limit < 0 {
		probs.Add("limit", "must be at least 1, got %d", p.Limit)
	}
	return probs.Err()
}

// ReadCatalog reads a catalog file's servers and their tools (toolsearch.ReadCatalog), a tool
// without a public name given the one its server's client would offer it by
// (mcpclient.PublicToolName), for [SearchTools] without starting anything.
func ReadCatalog(path string) ([]toolsearch.Server, error) {
	servers, err := toolsearch.ReadCatalog(path)
	if err != nil {
		return nil, err
	}
	for i := range servers {
		for j := range servers[i].Tools {
			if t := &servers[i].Tools[j]; t.PublicName == "" {
				t.PublicName = mcpclient.PublicToolName(servers[i].Name, t.Name)
			}
		}
	}
	return servers, nil
}

// SearchTools ranks the tools of servers for each query of p (a limit of 0 is
// toolsearch.DefaultLimit). A server p names that servers lacks is an
// [*UnknownServerError] looked for where.
func SearchTools(servers []toolsearch.Server, p SearchParams, where string) ([]toolsearch.QueryHits, error) {
	if p.Server != "" {
		names := make([]string, 0, len(servers))
		found := false
		for _, s := range servers {
			if s.Name != "" { // the tools of no MCP server
				names = append(names, s.Name)
			}
			found = found || s.Name == p.Server
		}
		if !found {
			return nil, &UnknownServerError{Name: p.Server, Where: where, Known: names}
		}
	}
	if p.Limit == 0 {
		p.Limit = toolsearch.DefaultLimit
	}
	ix := toolsearch.New(servers)
	out := make([]toolsearch.QueryHits, len(p.Queries))
	for i, q := range p.Queries {
		out[i] = toolsearch.QueryHits{Query: q, Hits: ix.Search(q, toolsearch.SearchOptions{Limit: p.Limit, Server: p.Server, Schemas: p.Schemas})}
		if out[i].Hits == nil {
			out[i].Hits = []toolsearch.Hit{}
		}
	}
	return out, nil
}

// searchTools is MethodSearchTools: the root's tools and their servers' instructions.
func (h *Host) searchTools(_ context.Context, p SearchParams) ([]toolsearch.QueryHits, error) {
	reg, err := h.registry()
	if err != nil {
		return nil, err
	}
	tools := reg.List(h.root)
	return SearchTools(deferral.Servers(tools, serverInstructions(h.root, tools)), p, fmt.Sprintf("in profile %q", h.profile.Source))
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
