package demoserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// focuses are the values of the review prompt's focus argument, as completions offer them.
var focuses = []string{"correctness", "performance", "readability", "security", "tests"}

// addPrompts registers the prompt templates (see the package documentation).
func (d *demo) addPrompts() {
	d.server.AddPrompt(&mcp.Prompt{
		Name:        "review",
		Title:       "Code review",
		Description: "Asks for a review of a file, with an optional focus.",
		Arguments: []*mcp.PromptArgument{
			{Name: "file", Description: "The file to review.", Required: true},
			{Name: "focus", Description: "What to look at first: " + strings.Join(focuses, ", ") + "."},
		},
	}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		a := req.Params.Arguments
		text := fmt.Sprintf("Please review %s.", a["file"])
		if f := a["focus"]; f != "" {
			text = fmt.Sprintf("Please review %s, looking at %s first.", a["file"], f)
		}
		return &mcp.GetPromptResult{Description: "A code review request", Messages: []*mcp.PromptMessage{
			{Role: "user", Content: &mcp.TextContent{Text: text}},
		}}, nil
	})
	d.server.AddPrompt(&mcp.Prompt{
		Name:        "logo",
		Title:       "Describe the logo",
		Description: "Shows the demo logo and the readme, and asks for a description.",
	}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
			{Role: "user", Content: &mcp.TextContent{Text: "Describe this logo for the readme below."}},
			{Role: "user", Content: &mcp.ImageContent{MIMEType: "image/png", Data: logoPNG()}},
			{Role: "user", Content: &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: readmeURI, MIMEType: "text/markdown", Text: d.readme()}}},
			{Role: "assistant", Content: &mcp.ResourceLink{URI: logoURI, Name: "logo.png", MIMEType: "image/png"}},
		}}, nil
	})
}

// complete answers completion/complete: the review prompt's focus, and the ids of the notes
// template (1 to 9).
func complete(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := req.Params
	var candidates []string
	switch {
	case p.Ref.Type == "ref/prompt" && p.Ref.Name == "review" && p.Argument.Name == "focus":
		candidates = focuses
	case p.Ref.Type == "ref/resource" && p.Ref.URI == notesTemplate && p.Argument.Name == "id":
		candidates = []string{"1", "2", "3", "4", "5", "6", "7", "8", "9"}
	}
	vals := []string{}
	for _, c := range candidates {
		if strings.HasPrefix(c, p.Argument.Value) {
			vals = append(vals, c)
		}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: vals, Total: len(vals)}}, nil
}
