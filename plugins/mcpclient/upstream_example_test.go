package mcpclient_test

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/testkit/demotree"
)

// A gateway finds the clients visible from its scope and uses their live sessions for
// requests other than tool calls (which go through the tool registry).
func ExampleUpstreams() {
	tree, err := demotree.Start("demo") // the tool registry and a client of the demo server
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tree.Close()

	for _, u := range mcpclient.Upstreams(tree.Root) {
		res, err := u.Session().ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "demo://config.json"})
		fmt.Println(u.Server(), err == nil && len(res.Contents) == 1)
	}
	// Output: demo true
}
