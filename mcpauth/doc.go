// Package mcpauth is the authorization side of the MCP client: OAuth 2.1 for remote
// (Streamable HTTP and legacy SSE) MCP servers, as the MCP authorization specification
// (2025-03-26 through 2026-07-28) describes it.
//
// It is built on the go-sdk's oauthex package (protected-resource and authorization-server
// metadata, dynamic client registration, WWW-Authenticate parsing, RFC 8693 token
// exchange, used for enterprise-managed authorization) and its auth package (metadata URL
// order), with golang.org/x/oauth2 for the token requests. What those packages
// lack is written here: the order of client identities (a pre-registered client, then a
// client ID metadata document, then dynamic registration whose result is stored and
// reused), the loopback redirect listener and browser opener, a credentials [Store] with a
// file implementation, refresh before expiry and on 401 with rotated refresh tokens saved
// at once and never sent twice, step-up on 403 insufficient_scope bounded to three
// attempts, the client credentials grant with private_key_jwt (RFC 7523), and a
// non-interactive mode that reports [ErrNeedsAuth] instead of opening a browser (storing the
// server's challenge so the login that follows starts from it).
//
// An [Authorizer] serves one server entry. Its [Authorizer.Transport] wraps an
// http.RoundTripper: every request gets the current access token; a 401 refreshes or
// (when interactive) runs the login flow and retries once; a 403 insufficient_scope
// re-authorizes with the union of the scopes. [Authorizer.Login] runs the flow on demand
// (the `harness mcp login` command).
//
// Tokens never leave the package in logs or errors: [Token] and [Record] print redacted.
package mcpauth
