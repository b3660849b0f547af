package mcpresources_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpresources"
	"github.com/cordisgo/harness/plugins/sysprompt"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// docsServer stands in for an MCP client's connection to a server with a text and a binary
// resource.
type docsServer struct{}

func (docsServer) Request(_ context.Context, req mcpresources.Request, _ mcpresources.CallerInfo) (json.RawMessage, error) {
	switch {
	case req.Method == mcpresources.MethodList:
		return json.RawMessage(`{"resources":[{"uri":"docs://guide","name":"guide"},{"uri":"docs://logo","name":"logo"}]}`), nil
	case req.Method == mcpresources.MethodRead && req.URI == "docs://logo":
		return json.RawMessage(`{"contents":[{"uri":"docs://logo","mimeType":"image/png","blob":"iVBORw0KGgo="}]}`), nil
	case req.Method == mcpresources.MethodRead:
		return json.RawMessage(`{"contents":[{"uri":"docs://guide","mimeType":"text/markdown","text":"# Guide"}]}`), nil
	}
	return json.RawMessage(`{"resourceTemplates":[]}`), nil
}

// newTree returns a tree with the tool registry, then the plugins given, then the resource
// service, settled, and the resource service.
func newTree(plugins ...ctx.PluginDef) (*ctx.Context, *mcpresources.Service) {
	root := ctx.New(ctx.Options{})
	_, _ = root.Plugin(toolregistry.Plugin, nil)
	for _, def := range plugins {
		_, _ = root.Plugin(def, nil)
	}
	_, _ = root.Plugin(mcpresources.Plugin, nil)
	_ = root.Settle(context.Background())
	resources, _ := mcpresources.Key.Get(root)
	return root, resources
}

// A server's provider brings the three shared tools; the model reads resources through
// them, and sees binary contents described rather than dumped.
func Example() {
	root, resources := newTree()
	defer func() { _ = root.Scope().Dispose(context.Background()) }()

	// What the MCP client does for its server "docs".
	if _, err := resources.Register(root, "docs", docsServer{}); err != nil {
		fmt.Println(err)
		return
	}

	tools, _ := toolregistry.Key.Get(root)
	for _, in := range tools.List(root) {
		fmt.Println(in.Name, "owned by", in.Owner)
	}
	res, _ := tools.Execute(root, root, mcpresources.ToolRead, json.RawMessage(`{"server":"docs","uri":"docs://logo"}`), toolregistry.ExecOptions{})
	fmt.Println(res.Text())
	fmt.Println("raw:", string(res.Raw))

	_, err := tools.Execute(root, root, mcpresources.ToolList, json.RawMessage(`{"server":"gh"}`), toolregistry.ExecOptions{})
	fmt.Println(err)
	// Output:
	// list_mcp_resource_templates owned by mcpresources
	// list_mcp_resources owned by mcpresources
	// read_mcp_resource owned by mcpresources
	// MCP server: docs
	// {"contents":[{"uri":"docs://logo","mimeType":"image/png","blob":"[binary blob: 8 bytes, image/png]"}]}
	// raw: {"contents":[{"uri":"docs://logo","mimeType":"image/png","blob":"iVBORw0KGgo="}]}
	// tool "list_mcp_resources": MCP resource server "gh" is unavailable in this agent's scope ("root"); visible servers: ["docs"]
}

// Servers registered in an agent scope are visible to that agent only; the prompt section
// lists what the assembling scope sees.
func Example_agentScopes() {
	root, resources := newTree(sysprompt.Plugin)
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	_, _ = resources.Register(root, "docs", docsServer{})

	// An agent scope is a layer of its own; what is registered through it stays inside.
	reviewer := ctx.Define(ctx.Meta{Name: "reviewer"}, func(c *ctx.Context, _ struct{}) error {
		_, err := resources.Register(c.Layered(), "github", docsServer{})
		return err
	})
	agent, _ := root.Plugin(reviewer, nil)
	_ = root.Settle(context.Background())

	fmt.Println("root sees", resources.Servers(root))
	fmt.Println("reviewer sees", resources.Servers(agent.Context()))
	prompt, _ := sysprompt.Key.Get(root)
	p, _ := prompt.Assemble(agent.Context(), nil)
	fmt.Println(p.Text)
	// Output:
	// root sees [docs]
	// reviewer sees [docs github]
	// ## MCP resource servers
	//
	// These MCP servers offer resources (documents, files, data) that you can read on demand. Use one of these names as the server argument: ["docs","github"].
	//
	// - list_mcp_resources: list a server's resources with their URIs. When a result has nextCursor, call again with that value as cursor to get the next page.
	// - list_mcp_resource_templates: list a server's URI templates (such as file:///{path}); fill in the placeholders to build a URI.
	// - read_mcp_resource: read one resource by URI. Binary contents are described by size and type, not shown.
}

// feedServer stands in for an MCP client whose server can subscribe: it prints what it
// would send, once per URI (the MCP client counts references the same way).
type feedServer struct {
	docsServer
	refs map[string]int
}

type feedSub struct {
	f   *feedServer
	uri string
}

func (f *feedServer) Subscribe(_ context.Context, uri string, _ mcpresources.CallerInfo) (mcpresources.Subscription, error) {
	if f.refs[uri]++; f.refs[uri] == 1 {
		fmt.Println("resources/subscribe", uri)
	}
	return feedSub{f, uri}, nil
}

func (s feedSub) Close() error {
	if s.f.refs[s.uri]--; s.f.refs[s.uri] == 0 {
		fmt.Println("resources/unsubscribe", s.uri)
	}
	return nil
}

// Two subscribers of one URI share the server's subscription; a server whose provider
// cannot subscribe is refused by name.
func ExampleService_Subscribe() {
	root, resources := newTree()
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	_, _ = resources.Register(root, "feed", &feedServer{refs: map[string]int{}})
	_, _ = resources.Register(root, "docs", docsServer{})

	a, _ := resources.Subscribe(context.Background(), root, "feed", "feed://news")
	b, _ := resources.Subscribe(context.Background(), root, "feed", "feed://news")
	_ = a.Close()
	fmt.Println("one closed")
	_ = b.Close()

	_, err := resources.Subscribe(context.Background(), root, "docs", "docs://guide")
	fmt.Println(err, errors.Is(err, mcpresources.ErrNoSubscribe))
	// Output:
	// resources/subscribe feed://news
	// one closed
	// resources/unsubscribe feed://news
	// MCP server "docs" does not support resource subscriptions true
}
