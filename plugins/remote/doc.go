// Package remote serves the methods that services expose with
// [ctx.Context.ExposeRemote] (for example "mcpManager/list") over HTTP on the loopback, and
// holds a small client for the CLI and tests.
//
// Mount [Plugin] once in a tree. While it is active it listens on [Config.Addr] (a
// loopback address; the default lets the kernel pick a port), provides the running
// [Server] as the service [Key], and serves every method exposed anywhere in the tree.
// Methods are looked up per request, so a method exposed or withdrawn while the server
// runs is seen by the next request. Unloading the plugin closes the listener and every
// connection, cancels the methods still running and waits for their handlers.
//
// # Files
//
// Each load generates a new random token (32 bytes from crypto/rand, hex-encoded) and
// writes two files, each atomically (a temporary file in the same directory, then a
// rename) with mode 0600, creating their directory with mode 0700:
//
//   - the token file ([Config.TokenFile]; by default [DefaultTokenFile], i.e.
//     remote.token under the "harness" directory of the user's configuration directory, as
//     [os.UserConfigDir] finds it but for a relative $XDG_CONFIG_HOME, which is ignored):
//     the token and a newline;
//   - the endpoint file ([Config.EndpointFile]; by default [EndpointFileFor] the token
//     file, i.e. remote.endpoint.json next to it): the JSON object [Endpoint],
//     {"url": "http://127.0.0.1:43117", "pid": 4242, "tokenFile": "/…/remote.token"}.
//
// Both are removed on unload unless another host has rewritten them since. [ReadEndpoint]
// and [Discover] read them. The token never appears in logs or errors.
//
// # The management page
//
// GET / (and /app.js, /app.css, /icon.svg) serves the management page embedded by package
// web, without a token: the files hold no data. [Server.PageURL] is the page's URL with the
// token in its fragment, which browsers never send; the page trades it for a session
// cookie with POST [SessionPath] ("Authorization: Bearer <token>" and an Origin equal to
// the page's own, http://<Host>), which answers with an HttpOnly, SameSite=Strict cookie
// named harness_session_<port> whose value is derived from the token (an HMAC: a new token
// invalidates it). Every other request accepts the cookie in place of the bearer token,
// but only from the page's own origin: a request with the cookie that is not a GET must
// carry that Origin, and one carrying another Origin is refused (forbidden_origin).
//
// # Protocol
//
// Every request needs the header "Authorization: Bearer <token>" (or the page's cookie).
//
//	POST /v1/call/{service}/{method}
//	    Body: the JSON parameters (an empty body means null).
//	    200 {"result": <the method's result>}
//
//	POST /v1/stream/{service}/{method}          (parameters in the body)
//	GET  /v1/stream/{service}/{method}?params=<JSON>
//	    200 text/event-stream: one event per value the method sends,
//	        data: <JSON>\n\n
//	    then, when the method returns nil,
//	        event: end\ndata: {}\n\n
//	    or, when it fails,
//	        event: error\ndata: {"error": {"code": …, "message": …}}\n\n
//	    Each event is flushed as it is written. The parameters are checked before the
//	    stream starts, so a refused request still gets a JSON error with its status.
//
//	GET /v1/methods
//	    200 {"methods": [{"name": "mcpManager/list", "kind": "call"}, …]}  (kind: call or stream)
//
//	GET  /v1/mux                          one event stream carrying any number of streams:
//	    event: mux\ndata: {"id": "<mux id>"}\n\n first, then per stream opened on it
//	    data: {"sub": "<name>", "value": <JSON>}\n\n, and its end as
//	    event: end\ndata: {"sub": …}\n\n or event: error\ndata: {"sub": …, "error": {…}}\n\n
//	POST /v1/mux/{id}/open                {"sub": "<name>", "method": "svc/m", "params": …}
//	POST /v1/mux/{id}/close               {"sub": "<name>"}
//	    Both answer 200 {"result": {}}. A browser allows six connections per host on
//	    HTTP/1.1; the management page keeps one, the mux, whatever it follows, so that the
//	    request answering a question never waits behind its own streams (or another tab's).
//	    The streams end with the mux's GET, and are waited for before it returns.
//
// A method's context is the request's: it is cancelled when the client disconnects and
// when the plugin unloads.
//
// # Security
//
// The listener accepts loopback addresses only (127.0.0.0/8, ::1, localhost); anything
// else, including 0.0.0.0, :: and host names, is a configuration error naming the addr
// key — unless [Config.AllowRemote] is set, which admits any IP literal (0.0.0.0 and [::]
// for every interface; host names never) and logs a warning that nothing is encrypted.
// Requests are checked in this order:
//
//   - the Host header must name the loopback, defending against DNS rebinding
//     (403 forbidden_host); with AllowRemote it may also be any IP literal (rebinding
//     needs a name) or one of [Config.AllowedHosts];
//   - a request carrying an Origin header must come from a loopback origin,
//     http(s)://127.0.0.1[:port], http(s)://localhost[:port] or http(s)://[::1][:port],
//     or with AllowRemote from the page's own origin, http://<Host>
//     (403 forbidden_origin); such a page gets CORS headers, and its preflight (OPTIONS,
//     which carries no credentials) is answered 204 without a token;
//   - the bearer token, compared in constant time (401 unauthorized), or the page's
//     cookie, with the rules above and one more: a request the browser marks
//     Sec-Fetch-Site same-site or cross-site (an image or link on another page, another
//     loopback port included) is refused (forbidden_origin), GET streams included.
//
// # Typed methods
//
// A method is declared once, with its name and both types, as a [Method] (or a
// [StreamMethod]) in the package that serves it. The service exposes it with
// [Method.Expose] (on [ctx.ExposeRemote][P, R]: the parameters are decoded into P once,
// strictly, an unknown key refused, named, as bad_request), and clients call it with
// [Method.Call] over a [Caller]: a [*Client] for a running host, a [*Local] for the tree in
// this process (the same JSON round trip and the same errors). See docs/remote.md.
//
// # Errors
//
// Every refused request answers {"error": {"code": "<code>", "message": "<text>"}} (an
// [Error]). The transport's codes are unauthorized (401), forbidden_host and
// forbidden_origin (403), not_found (404: no such path or method, or a method of the other
// kind), method_not_allowed (405), bad_request (400: parameters that are not JSON),
// too_large (413), internal (500: a result that is not JSON, a panic) and cancelled (503:
// the host is shutting down). Parameters a typed method refuses ([*ctx.ParamsError]) are
// bad_request (400). Every code is a [Code]; [CodeOf] reads the code of an error.
//
// A method's error becomes method_error (500) unless it implements
//
//	interface{ RemoteCode() remote.Code }
//
// (as [*Error] does; [Errorf] makes one; a service's own error type, such as
// mcpmanager.Error, may implement it next to its sentinels), whose code — lower case letters, digits and
// "_./-", at most 64 bytes — is sent as is. These codes have their own HTTP status:
// bad_request 400, not_found 404, conflict 409, unimplemented 501, unavailable 503,
// cancelled 503, timeout 504; any other code is sent with 500. [Code] is the one type of
// every code, hosts' and clients' alike. The message is the error's text, so methods must
// keep secrets out of their errors.
//
// # Concurrency
//
// [Server] is immutable and [Client] is safe for concurrent use. The send function a stream
// method receives is safe for concurrent use; it fails once the client is gone or the
// method has returned.
package remote
