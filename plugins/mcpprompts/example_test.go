package mcpprompts_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpprompts"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// A host lists the prompts of the servers visible from a scope and renders one with its
// arguments; a missing required argument is refused before any request.
func ExampleService() {
	srv := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1"}, nil)
	srv.AddPrompt(&mcp.Prompt{Name: "summarize", Description: "summarize a note",
		Arguments: []*mcp.PromptArgument{{Name: "id", Required: true}}},
		func(_ context.Context, r *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "Summarize note " + r.Params.Arguments["id"] + "."}}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer hs.Close()

	root := ctx.New(ctx.Options{Logger: slog.New(slog.DiscardHandler)})
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	for _, def := range []ctx.PluginDef{toolregistry.Plugin, mcpprompts.Plugin} {
		s, _ := root.Plugin(def, nil)
		_ = s.Wait(context.Background())
	}
	var cfg mcpclient.Config
	cfg.Default()
	cfg.ServerName, cfg.Transport, cfg.URL = "notes", mcpclient.TransportStreamableHTTP, hs.URL
	client, _ := root.Plugin(mcpclient.Plugin, cfg)
	_ = client.Wait(context.Background())

	prompts, _ := mcpprompts.Key.Get(root)
	ps, _ := prompts.List(context.Background(), root, "")
	for _, p := range ps {
		fmt.Println(p.Server, p.Name, p.Arguments[0].Name, p.Arguments[0].Required)
	}
	res, _ := prompts.Get(context.Background(), root, "notes", "summarize", map[string]string{"id": "42"})
	fmt.Println(res.Messages[0].Role, res.Messages[0].Content.(*mcp.TextContent).Text)
	_, err := prompts.Get(context.Background(), root, "notes", "summarize", nil)
	fmt.Println(err)
	// Output:
	// notes summarize id true
	// user Summarize note 42.
	// prompt "summarize" of MCP server "notes" needs the argument "id" (required)
}
