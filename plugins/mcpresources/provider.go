package mcpresources

import (
	"context"
	"encoding/json"
)

// Resource methods a [Provider] serves.
const (
	MethodList      = "resources/list"
	MethodTemplates = "resources/templates/list"
	MethodRead      = "resources/read"
)

// Request is one resource operation against one server. Cursor applies to the list
// methods and URI to reads; both are the server's own values and pass through unchanged.
// An empty Cursor asks for the first page.
//
// A Request is a plain value.
type Request struct {
	Method string
	Cursor string
	URI    string
}

// Provider gives access to one configured server's resources. The MCP client plugin
// implements it over its live connection.
//
// Implementations must be safe for concurrent use.
type Provider interface {
	// Request runs req against the server and returns the protocol result as lossless
	// JSON. ctx carries the caller's cancellation; caller is the calling scope's context
	// (it identifies the agent making the call).
	Request(cx context.Context, req Request, caller CallerInfo) (json.RawMessage, error)
}

// CallerInfo identifies who asked for a resource operation.
//
// A CallerInfo is a plain value.
type CallerInfo struct {
	// Scope is the name of the calling scope.
	Scope string
	// CallID is the tool call's id, when the request comes from a tool call.
	CallID string
}

// Subscriber is implemented by providers whose server can push resource updates
// (resources/subscribe). The MCP client's provider implements it.
//
// Implementations must be safe for concurrent use.
type Subscriber interface {
	// Subscribe takes one reference to the server's subscription of uri: the first
	// reference subscribes on the wire, the last [Subscription.Close] unsubscribes. ctx
	// bounds the request; caller identifies who asked. A server that cannot subscribe
	// fails with an error wrapping [ErrNoSubscribe].
	Subscribe(cx context.Context, uri string, caller CallerInfo) (Subscription, error)
}

// Subscription is one reference to a server's subscription of a URI. Updates arrive as
// events in the scope tree (the MCP client's mcpclient.ResourceUpdatedEvent), not through
// the Subscription.
//
// Close is safe for concurrent use and idempotent.
type Subscription interface {
	// Close releases this reference; the last one to go unsubscribes on the wire.
	Close() error
}
