package toolsearch

import "github.com/cordisgo/harness/ctx"

// ServerInstructions gives the instructions of the MCP servers visible from a scope (each
// server's initialize result), which the index ranks with the server's tools at a low
// weight (see [Server.Instructions]).
//
// Implementations must be safe for concurrent use.
type ServerInstructions interface {
	// Instructions returns the instructions of server as visible from c, "" when unknown.
	Instructions(c *ctx.Context, server string) string
}

// InstructionsFunc adapts a function to [ServerInstructions]; it is safe for concurrent use
// when the function is.
type InstructionsFunc func(c *ctx.Context, server string) string

// Instructions implements [ServerInstructions].
func (f InstructionsFunc) Instructions(c *ctx.Context, server string) string { return f(c, server) }

// InstructionsKey is the optional [ServerInstructions] service. An agent's tool_search
// ranks the servers' instructions when a host provides it at the root (the harness binary
// does, from its MCP clients); without it, the tools alone are ranked.
var InstructionsKey = ctx.NewKey[ServerInstructions]("toolsearch:instructions")
