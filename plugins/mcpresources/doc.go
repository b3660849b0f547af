// Package mcpresources provides the mcpResources service: MCP servers register a resource
// [Provider] per layer, and the service offers three shared tools that let the model list
// and read the resources of any server visible from its agent's scope. Discovery and reads
// happen on demand, one tool call at a time; nothing is read when a server connects.
//
// Mount [Plugin] once, usually at the root, next to the tools service it injects. It has no
// configuration. Each MCP client follows the service from a sub-scope that injects it and
// calls [Service.Register] for its server; the provider stays registered while the client
// entry is loaded, whatever the connection's health.
//
// # Layers and visibility
//
// Providers live in layers ([ctx.Context.Layer]): the root is the global layer, and every
// agent scope (marked with [ctx.Context.Layered]) is a layer of its own. A provider registered
// through a context belongs to that context's layer and is an effect of that context. A tool
// call made from scope S sees the providers of the layers of S and its ancestors; when two
// layers hold the same server name, the nearest wins. Sibling agent scopes never see each
// other's servers. A name may be registered once per layer.
//
// The first provider of a layer registers the three tools in the same layer of the tools
// service, and the last one to go removes them. The tools are owned by the service
// ([ToolOwner]), not by whichever provider came first, so one MCP client unloading never
// takes away the tools its siblings still serve. An agent scope without providers of its own
// still sees the tools and servers of enclosing layers.
//
// # The tools
//
// Every tool takes the server name explicitly. The name is resolved in the calling agent's
// scope ([toolregistry.Call].Caller) before any request reaches a server; a name that no
// visible provider has fails with a tool error wrapping [ErrUnknownServer] that lists the
// visible servers. Arguments are validated by the tools service against these schemas before
// the service runs, so a missing or empty argument never reaches a provider:
//
//	list_mcp_resources           {"server": string (required), "cursor": string}
//	list_mcp_resource_templates  {"server": string (required), "cursor": string}
//	read_mcp_resource            {"server": string (required), "uri": string (required)}
//
// Required strings must not be empty; other keys are ignored. ([ListParameters] and
// [ReadParameters] hold the exact JSON schemas, with the descriptions the model reads.) They
// map to the MCP
// methods resources/list, resources/templates/list and resources/read. Cursors and URIs are
// the server's own values and pass through unchanged: without a cursor a list call returns
// the server's first page, and a result's nextCursor, passed back as cursor, gets the next.
//
// # Results
//
// A successful call's [toolregistry.Result] keeps the provider's protocol result, the full
// MCP JSON, unchanged in Raw and Structured, base64 blobs included, for programmatic callers.
// The model sees one text block: a header naming the server, then the same JSON in compact
// form with the value of every "blob" string replaced by a description of its decoded size
// and MIME type, worked out without decoding it:
//
//	MCP server: demo
//	{"contents":[{"uri":"demo://logo.png","mimeType":"image/png","blob":"[binary blob: 92 bytes, image/png]"}]}
//
// Text contents, URIs, MIME types and cursors stay as the server sent them. A provider error
// (a disconnected or reconnecting server, a server error) is a tool error naming the server
// and carrying the error's text; the tools and the server name stay.
//
// # Subscriptions
//
// [Service.Subscribe] takes one reference to a server's subscription of a URI, through the
// provider when it is a [Subscriber] (the MCP client's is). The MCP client counts the
// references per URI: one resources/subscribe on the wire for any number of subscribers, a
// resources/unsubscribe when the last [Subscription] closes, and the subscriptions sent
// again after a reconnect. Updates are events of the scope tree
// (mcpclient.ResourceUpdatedEvent), not values of the Subscription. A server without the
// resources.subscribe capability is refused with [ErrNoSubscribe], naming it.
//
// # System prompt
//
// While a systemPrompt service is available (mounted before or after this plugin, or
// replaced), every layer with providers carries one section named [SectionName] at
// [SectionOrder] (sysprompt.OrderMCPServers, 3100). It is rendered at each assembly for the
// assembling scope: the sorted names of the resource servers visible from there, as a JSON
// array, and how to use the three tools. A section that would list no server renders empty
// and is dropped. The name sorts before the MCP client's per-server instruction sections
// ("mcp:<server>") of the same order, so the list of servers precedes their instructions.
package mcpresources
