package sampling_test

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/sampling"
)

// A model plugin provides a sampler; MCP clients below it then advertise sampling and pass
// their servers' sampling/createMessage requests to it.
func Example() {
	root := ctx.New(ctx.Options{})
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	_, err := sampling.Provide(root, "echo", sampling.Func(func(_ context.Context, r *sampling.Request) (*mcp.CreateMessageResult, error) { //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
		last := r.Params.Messages[len(r.Params.Messages)-1].Content.(*mcp.TextContent)
		return &mcp.CreateMessageResult{Model: "echo-1", Role: "assistant", Content: &mcp.TextContent{Text: "you said: " + last.Text}}, nil //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
	}))
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := sampling.Sample(context.Background(), root, &sampling.Request{Server: "demo", Params: &mcp.CreateMessageParams{ //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
		MaxTokens: 50, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello"}}}}}) //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sampling.Available(root), res.Model, res.Content.(*mcp.TextContent).Text)
	// Output: true echo-1 you said: hello
}
