package regtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/toolsearch"
)

// Grow returns servers copied until they hold n tools, the copies' servers renamed
// ("name-2", "name-3", …) and the last copy cut at n: a fleet of real tools larger than
// the catalog it comes from, each tool with near-duplicates on other servers.
func Grow(servers []toolsearch.Server, n int) []toolsearch.Server {
	if ToolCount(servers) == 0 {
		return nil // nothing to copy: no number of copies reaches n
	}
	var out []toolsearch.Server
	total := 0
	for copyN := 1; total < n; copyN++ {
		for _, s := range servers {
			if total >= n {
				break
			}
			if copyN > 1 {
				s.Name = fmt.Sprintf("%s-%d", s.Name, copyN)
			}
			if total+len(s.Tools) > n {
				s.Tools = s.Tools[:n-total]
			}
			total += len(s.Tools)
			out = append(out, s)
		}
	}
	return out
}

// ToolCount returns how many tools servers hold.
func ToolCount(servers []toolsearch.Server) int {
	n := 0
	for _, s := range servers {
		n += len(s.Tools)
	}
	return n
}

// Fleet mounts a tool registry on a new root (disposed when the test ends) and registers
// servers' tools in it as an MCP client registers a server's: one set per server, the
// public names the client gives them ([mcpclient.PublicToolName]), Meta "server" and
// "mcpTool"; each tool runs execute.
func Fleet(t testing.TB, servers []toolsearch.Server, execute func(context.Context, *toolregistry.Call) (*toolregistry.Result, error)) (*ctx.Context, *toolregistry.Registry) {
	t.Helper()
	root := ctxtest.New(t)
	reg := ctxtest.MountService(t, root, toolregistry.Plugin, nil, toolregistry.Key)
	for _, s := range servers {
		set, err := reg.NewSet(root, s.Name)
		if err != nil {
			t.Fatal(err)
		}
		tools := make([]toolregistry.Tool, len(s.Tools))
		for i, tl := range s.Tools {
			tools[i] = toolregistry.Tool{Name: mcpclient.PublicToolName(s.Name, tl.Name), Description: tl.Description,
				Parameters: tl.InputSchema, Execute: execute, Meta: map[string]string{"server": s.Name, "mcpTool": tl.Name}}
		}
		if err := set.Replace(tools); err != nil {
			t.Fatal(err)
		}
	}
	return root, reg
}
