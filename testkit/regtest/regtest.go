// Package regtest reads the tool registry as tests check it: the names of the tools a scope
// sees, and the public names an MCP client gives a server's tools; it starts a call in the
// background for tests that act while it runs ([Start]); and it fills a registry with a
// fleet's tools as an MCP client registers them ([Fleet], [Grow]) for the search and
// deferral tests. Only _test.go files may import this package (internal/archtest checks it).
package regtest

import (
	"strings"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// Names returns the names of the tools of reg visible from cx that start with prefix (every
// tool when prefix is ""), sorted, as [toolregistry.Registry.List] lists them. Safe for
// concurrent use, as List is.
func Names(reg *toolregistry.Registry, cx *ctx.Context, prefix string) []string {
	var out []string
	for _, in := range reg.List(cx) {
		if strings.HasPrefix(in.Name, prefix) {
			out = append(out, in.Name)
		}
	}
	return out
}

// PublicTools returns the public names ([mcpclient.PublicToolName]) of server's tools, in
// the order of tools.
func PublicTools(server string, tools ...string) []string {
	out := make([]string, len(tools))
	for i, name := range tools {
		out[i] = mcpclient.PublicToolName(server, name)
	}
	return out
}
