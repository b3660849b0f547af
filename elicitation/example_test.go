package elicitation_test

import (
	"context"
	"fmt"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/elicitation"
)

// yes is a responder that accepts every form with the name "Ada".
type yes struct{}

func (yes) Supports(m elicitation.Mode) bool { return m == elicitation.ModeForm }

func (yes) Elicit(_ context.Context, r *elicitation.Request) (*elicitation.Response, error) {
	content := map[string]any{}
	for _, f := range r.Form.Fields {
		if f.Kind == elicitation.String {
			content[f.Name] = "Ada"
		}
	}
	return &elicitation.Response{Action: elicitation.Accept, Content: content}, nil
}

// A plugin provides a responder at the root; the MCP clients below then advertise form
// elicitation and pass their servers' questions to it.
func Example() {
	root := ctx.New(ctx.Options{})
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	if _, err := elicitation.Provide(root, "yes", yes{}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(elicitation.Modes(root))

	form, err := elicitation.ParseForm(map[string]any{
		"type":       "object",
		"properties": map[string]any{"name": map[string]any{"type": "string", "title": "Your name"}},
		"required":   []any{"name"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := elicitation.Elicit(context.Background(), root, &elicitation.Request{Server: "demo", Mode: elicitation.ModeForm, Message: "Who are you?", Form: form})
	fmt.Println(res.Action, res.Content, err)
	// Output:
	// [form]
	// accept map[name:Ada] <nil>
}

// A field reads what a person types, in plain words.
func ExampleField_Parse() {
	form, _ := elicitation.ParseForm(map[string]any{
		"type": "object",
		"properties": map[string]any{
			"age": map[string]any{"type": "integer", "minimum": 1, "maximum": 150},
		},
	})
	age := form.Fields[0]
	fmt.Println(age.Parse("42"))
	fmt.Println(age.Parse("200"))
	// Output:
	// 42 <nil>
	// <nil> age: expected a whole number from 1 to 150, got 200
}
