// Package mcpprompts provides the mcpPrompts service: the prompt templates of the MCP
// servers visible from a scope, listed with their arguments, rendered (prompts/get) and
// completed (completion/complete), for any surface of the host — the CLI (`harness prompts
// list|get`), the remote API (prompts/list, prompts/get, prompts/complete) and plugins.
//
// Mount [Plugin] once, usually at the root. It has no configuration and injects nothing: it
// finds the servers through the MCP clients' upstreams ([mcpclient.Upstreams]), so a server
// is visible from a scope exactly when its tools are (the nearest registration layer wins;
// sibling agent scopes never see each other's servers).
//
// # Listing and the cache
//
// [Service.List] follows every page of a server's prompts/list. The listing is kept per
// client, for the client's current session: it is dropped when the server announces
// notifications/prompts/list_changed and when the client's connection changes
// ([mcpclient.StatusEvent]: a reconnect is a new session), and the next call lists again.
// Nothing is listed when a server connects, and never inside a notification handler. A
// server that does not advertise the prompts capability has no prompts and is not asked.
// Listing every server asks them in parallel, and every request (a whole listing, a get, a
// completion) is bounded by [RequestTimeout].
//
// # Checks before a request
//
// [Service.Get] and [Service.Complete] check what they can before any request reaches a
// server: an unknown server or prompt (with a did-you-mean from the visible names), an
// argument the prompt does not declare, a required argument that is missing. A prompt the
// cached listing does not know is looked up once more in a fresh listing first, so a prompt
// the server has just added is found even if its list_changed is still on its way. Every
// error is an [*Error] naming the server and the prompt; match the cause with [errors.Is]
// and the sentinels ([ErrUnknownServer], [ErrUnknownPrompt], ...).
//
// # Remote methods
//
//	prompts/list      call  {"server": name}                       → {"prompts": [Prompt], "errors": [{"server", "error"}]}
//	prompts/get       call  {"server", "name", "arguments": {k: v}} → GetPromptResult (the server's JSON: description, messages)
//	prompts/complete  call  CompleteRequest                         → {"values": [...], "total", "hasMore"}
//	prompts/watch     stream                                        → {"server": name}, ...
//
// prompts/watch sends {"server": ""} at once and then {"server": name} whenever that server's
// prompts may have changed ([Changed]; coalesced while the client reads): list it again.
// prompts/list without a server lists every visible server; the servers that could not be
// listed are named under "errors" beside the prompts of the others. The errors of the
// checks answer with the codes not_found (unknown server or prompt), bad_request (an
// argument) and unavailable (a server not connected).
package mcpprompts
