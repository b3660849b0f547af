package answer_test

import (
	"context"
	"fmt"
	"testing"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/examples/answer"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/testkit/demotree"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The demo server's ask tool asks its form and its URL; the plugin's responder answers both.
func Example() {
	// The demo server, the tool registry and a client of the demo server; the plugin is
	// mounted, and loaded, before the client connects.
	tree, err := demotree.StartWith("demo", demotree.Options{BeforeClient: func(root *ctx.Context) error {
		s, err := root.Plugin(answer.Plugin, struct{}{})
		if err == nil {
			err = s.Wait(context.Background())
		}
		return err
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tree.Close()
	root := tree.Root

	reg, _ := toolregistry.Key.Get(root)
	for _, args := range []string{`{}`, `{"mode": "url"}`} {
		res, err := reg.Execute(root, root, "mcp__demo__ask", []byte(args), toolregistry.ExecOptions{})
		fmt.Println(res.Text(), err)
	}
	// Output:
	// accept: age=36, color=green, name=Grace, subscribe=false <nil>
	// accept: confirmed demo-1 <nil>
}
