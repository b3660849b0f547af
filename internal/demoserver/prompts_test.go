package demoserver

import (
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPrompts: the two templates, rendered, and the completions of review's focus and of
// the notes template's id.
func TestPrompts(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transport) {
		cs := tr.connect(t, Options{}, nil)
		cx := testContext(t)
		var names []string
		for p, err := range cs.Prompts(cx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, p.Name)
		}
		if !slices.Equal(names, []string{"logo", "review"}) {
			t.Fatalf("prompts %v", names)
		}
		res, err := cs.GetPrompt(cx, &mcp.GetPromptParams{Name: "review", Arguments: map[string]string{"file": "main.go", "focus": "tests"}})
		if err != nil || res.Messages[0].Content.(*mcp.TextContent).Text != "Please review main.go, looking at tests first." {
			t.Fatalf("review: %v %+v", err, res)
		}
		res, err = cs.GetPrompt(cx, &mcp.GetPromptParams{Name: "logo"})
		if err != nil || len(res.Messages) != 4 {
			t.Fatalf("logo: %v %+v", err, res)
		}
		if img, ok := res.Messages[1].Content.(*mcp.ImageContent); !ok || !slices.Equal(img.Data, logoPNG()) {
			t.Errorf("logo image: %#v", res.Messages[1].Content)
		}
		if r, ok := res.Messages[2].Content.(*mcp.EmbeddedResource); !ok || r.Resource.URI != readmeURI || r.Resource.Text == "" {
			t.Errorf("logo readme: %#v", res.Messages[2].Content)
		}
		for _, c := range []struct {
			ref        mcp.CompleteReference
			arg, value string
			want       []string
		}{
			{mcp.CompleteReference{Type: "ref/prompt", Name: "review"}, "focus", "re", []string{"readability"}},
			{mcp.CompleteReference{Type: "ref/resource", URI: notesTemplate}, "id", "", []string{"1", "2", "3", "4", "5", "6", "7", "8", "9"}},
			{mcp.CompleteReference{Type: "ref/prompt", Name: "review"}, "file", "", []string{}},
		} {
			got, err := cs.Complete(cx, &mcp.CompleteParams{Ref: &c.ref, Argument: mcp.CompleteParamsArgument{Name: c.arg, Value: c.value}})
			if err != nil || !slices.Equal(got.Completion.Values, c.want) {
				t.Errorf("complete %s %s=%q: %v %v", c.ref.Name+c.ref.URI, c.arg, c.value, err, got)
			}
		}
	})
}
