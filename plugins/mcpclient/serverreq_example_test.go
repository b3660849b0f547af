package mcpclient_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/testkit/demotree"
	"github.com/cordisgo/harness/testkit/mcptest"
)

// A server with roots configured asks for them during a call: a call made with WithRoots
// (a gateway's downstream session) gets the caller's roots, any other call the configured
// ones.
func ExampleWithRoots() {
	srv := mcp.NewServer(&mcp.Implementation{Name: "lister", Version: "1"}, nil)
	mcptest.AddRootsTool(srv) // its tool roots answers with the roots the client lists
	web := httptest.NewServer(mcptest.Handler(srv))
	defer web.Close()

	root := ctx.New(ctx.Options{Logger: slog.New(slog.DiscardHandler)})
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	var cfg mcpclient.Config
	cfg.Default()
	cfg.ServerName, cfg.Transport, cfg.URL, cfg.ProtocolVersion = "lister", mcpclient.TransportStreamableHTTP, web.URL, "2025-11-25"
	cfg.Roots = []string{"/srv/project"}
	for _, p := range []struct {
		def ctx.PluginDef
		cfg any
	}{{toolregistry.Plugin, nil}, {mcpclient.Plugin, cfg}} {
		s, err := root.Plugin(p.def, p.cfg)
		if err == nil {
			err = s.Wait(context.Background())
		}
		if err != nil {
			fmt.Println(err)
			return
		}
	}
	reg, _ := toolregistry.Key.Get(root)

	mine := mcpclient.WithRoots(mcpclient.WithOrigin(context.Background(), "session-1"), func(context.Context) ([]*mcp.Root, error) { //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)
		return []*mcp.Root{{URI: "file:///home/me/work"}}, nil //nolint:staticcheck // SEP-2577: roots stay for peers on protocol versions that have them (2025-11-25)
	})
	for _, cx := range []context.Context{mine, context.Background()} {
		res, err := reg.Execute(cx, root, "mcp__lister__roots", nil, toolregistry.ExecOptions{})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(res.Text())
	}
	// Output:
	// [file:///home/me/work]
	// [file:///srv/project]
}

// A gateway forwards a downstream caller's requests through the client: a resources/read
// with ReadResource, so that the read is watched like the client's own (idle timeout,
// progress) and the requests the server sends meanwhile reach the caller; any other request
// (a prompt, a completion) on the client's session inside Track, so that a server request
// arriving meanwhile is never attributed to another caller's call in flight.
func ExampleUpstream() {
	tree, err := demotree.Start("demo") // the tool registry and a client of the demo server
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tree.Close()
	u, _ := mcpclient.LookupUpstream(tree.Root, "demo")
	cx := mcpclient.WithOrigin(context.Background(), "session-1")
	res, err := u.ReadResource(cx, &mcp.ReadResourceParams{URI: "demo://config.json"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Contents[0].URI)

	done := u.Track(cx)
	prompt, err := u.Session().GetPrompt(cx, &mcp.GetPromptParams{Name: "review", Arguments: map[string]string{"file": "main.go"}})
	done()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(prompt.Messages[0].Content.(*mcp.TextContent).Text)
	// Output:
	// demo://config.json
	// Please review main.go.
}
