// Package elicitation is the scope tree's way for an MCP server to ask the user something
// (MCP's elicitation/create): a form to fill, or a URL to visit. Surfaces that can reach a
// person — the terminal, the remote API behind the web page, a plugin — provide a
// [Responder] in a layer of the tree with [Provide]; an MCP client asks the responders
// visible from its scope with [Elicit].
//
// # Capability
//
// An MCP client advertises the elicitation capability, and only the modes ([ModeForm],
// [ModeURL]) some visible responder or [Offer] supports, when it connects ([Modes]), and
// looks the responders up when a request arrives. A server never sees a client that offers
// elicitation while nothing could answer: with no responder and no offer (the default on a
// non-interactive run, `--elicitation decline`), the capability is not advertised at all.
// A responder provided after a client connected ([ChangedEvent]) makes the client reconnect
// once, when it has no request in flight, to declare its modes; a host offers what its
// rows will answer before it mounts them, so that no client has to.
//
// # Who answers
//
//   - A request caused by a call whose context carries a responder ([WithResponder]) — a
//     gateway's downstream session, say — goes to that responder alone. When it passes
//     ([ErrPass]) the scoped responders are asked.
//   - Otherwise every visible responder that supports the mode is asked at once; the first
//     answer wins and the others' contexts are cancelled. A responder that cannot take the
//     request returns [ErrPass].
//   - A form answer is checked against the requested schema ([Form.Check]) before it is sent:
//     a responder's invalid answer is refused (its error names the field and what was
//     expected), never sent to the server.
//   - With nobody left to answer, the request is declined.
//
// The caller bounds the request with its context; an MCP client reports a timeout to the
// server as "cancel" (the user made no choice).
//
// # Forms
//
// [ParseForm] turns a requested schema (a flat object of strings, numbers, integers,
// booleans, single and multiple choices) into [Field]s that a responder renders: title,
// description, type, choices with their titles, the default (SEP-1034), limits, and whether
// the value is secret. [Field.Parse] reads a typed answer in plain words; [Form.Defaults] is
// the answer a non-interactive policy gives ([Defaults]).
package elicitation
