// Package loopback is the one guarded front door of the harness's local HTTP servers, the
// remote API (plugins/remote) and the MCP gateway (gateway):
//
//   - where they listen: [Listen] on the loopback unless configured otherwise ("localhost"
//     is 127.0.0.1, so a listener never depends on the resolver), [IsLoopback] and
//     [DialAddr] for what local clients dial;
//   - which requests they answer: a [Guard] checks the Host header (DNS rebinding: a page
//     on a name that resolves to 127.0.0.1 must not reach the server), the Origin header (a
//     foreign page) and the bearer token (the scheme name in any case, compared in constant
//     time);
//   - how local clients find them: endpoint files written atomically with mode 0600
//     ([WriteFile]), removed only while they are still the writer's ([RemoveFile]), and
//     never taken from another host that is running ([Held]).
//
// # Concurrency
//
// A [Guard] is immutable once made and safe for concurrent use. The functions may be called
// concurrently; files are replaced by rename, so a reader sees a whole file or none.
package loopback
