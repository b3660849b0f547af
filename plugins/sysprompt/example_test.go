package sysprompt_test

import (
	"context"
	"fmt"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/sysprompt"
)

// greeter adds one section to the prompt of every scope below the one it is mounted in.
var greeter = ctx.Define(ctx.Meta{Name: "greeter", Inject: []ctx.Dependency{sysprompt.Key}}, greeterApply)

func greeterApply(c *ctx.Context, _ struct{}) error {
	_, err := sysprompt.Key.Use(c).Register(c, sysprompt.Section{
		Name:        "greeting",
		Order:       100,
		Text:        "Greet {{user}} by name.",
		Interpolate: true,
	})
	return err
}

// A plugin registers a section; the prompt is assembled for one turn and records who wrote
// which bytes.
func Example() {
	root := ctx.New(ctx.Options{})
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	_, _ = root.Plugin(sysprompt.Plugin, map[string]any{"preamble": "You are a careful assistant."})
	_, _ = root.Plugin(greeter, nil)
	_ = root.Settle(context.Background())

	prompt, _ := sysprompt.Key.Get(root)
	p, err := prompt.Assemble(root, map[string]string{"user": "Ada"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Text)
	fmt.Println("--")
	for _, s := range p.Sections {
		fmt.Printf("%s (owner %s): bytes %d-%d\n", s.Name, s.Owner, s.Start, s.End)
	}
	// Output:
	// You are a careful assistant.
	//
	// Greet Ada by name.
	// --
	// sysprompt:preamble (owner sysprompt): bytes 0-28
	// greeting (owner greeter): bytes 30-48
}

// A section whose text arrives later, such as an MCP server's instructions, is registered with
// Set and updated through its handle. Until then it is empty and takes no room in the prompt.
func ExampleService_Set() {
	root := ctx.New(ctx.Options{})
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	prompt := sysprompt.New(sysprompt.Config{})

	h, _ := prompt.Set(root, sysprompt.Section{Name: "mcp:docs", Order: sysprompt.OrderMCPServers})
	p, _ := prompt.Assemble(root, nil)
	fmt.Printf("before: %q\n", p.Text)

	_ = h.SetText("### MCP server: docs\n\nSearch before answering; {{braces}} stay as written.")
	p, _ = prompt.Assemble(root, nil)
	fmt.Println(p.Text)
	// Output:
	// before: ""
	// ### MCP server: docs
	//
	// Search before answering; {{braces}} stay as written.
}
