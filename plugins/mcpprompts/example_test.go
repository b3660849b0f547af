package mcpprompts_test

import (
	"context"
	"errors"
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
	srv := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1"}, &mcp.ServerOptions{
		CompletionHandler: func(_ context.Context, r *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			v := r.Params.Argument.Value
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{v + "1", v + "2"}}}, nil
		},
	})
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

	if err := usePrompts(root); err != nil {
		fmt.Println(err)
	}
	prompts, _ := mcpprompts.Key.Get(root)
	_, err := prompts.Get(context.Background(), root, "notes", "summarize", nil)
	fmt.Println(err)
	// Output:
	// notes summarize 1
	// user: Summarize note 42.
	// [41 42]
	// prompt "summarize" of MCP server "notes" needs the argument "id" (required)
}

// usePrompts is a plugin's use of the service (docs/plugins.md shows it): c's scope decides
// which servers are visible, and c, a context.Context, bounds the requests.
func usePrompts(c *ctx.Context) error {
	prompts, ok := mcpprompts.Key.Get(c)
	if !ok {
		return errors.New("the profile mounts no mcpprompts row")
	}
	ps, err := prompts.List(c, c, "") // every visible server; err names those that failed
	if err != nil {
		return err
	}
	for _, p := range ps {
		fmt.Println(p.Server, p.Name, len(p.Arguments))
	}
	res, err := prompts.Get(c, c, "notes", "summarize", map[string]string{"id": "42"})
	if err != nil {
		return err // an *mcpprompts.Error: an unknown name (with a did-you-mean), a missing argument, the server's failure
	}
	for _, m := range res.Messages {
		if t, ok := m.Content.(*mcp.TextContent); ok {
			fmt.Printf("%s: %s\n", m.Role, t.Text)
		}
	}
	vals, err := prompts.Complete(c, c, mcpprompts.CompleteRequest{Server: "notes", Prompt: "summarize", Argument: "id", Value: "4"})
	if err != nil {
		return err
	}
	fmt.Println(vals.Values)
	return nil
}
