// Package host runs a harness host without the command line: a profile (package profiles)
// mounted as a live scope tree with a plugin catalog, the rows checked before anything
// starts, the status of every MCP client, the host's own remote methods, and the profile's
// files applied to the running tree as they are edited. The harness binary (cmd/harness)
// is one caller: it parses flags, prints and talks to the terminal around this package;
// an embedder calls it directly.
//
// # Starting a profile
//
// The catalog maps the names profile rows give in their use key to plugin definitions
// ([Catalog] returns the built-in one; add your own plugins to the copy). [Check] decodes
// every row's configuration with its plugin, so that every mistake is reported, with the
// key path, before anything mounts. [Start] makes a root scope, mounts the rows in order
// ([Host.Mount]: a row with nested rows is an agent scope, a layer of its own) and waits
// for the tree to settle ([Host.Ready]); [Host.Close] disposes it. A caller that owns the
// root itself (the binary ties it to its application shell) uses [New], then Mount and
// Ready.
//
// Loading the profile is profiles.Load's; pass [ServerDocuments] as its Servers so that a
// profile file may also be another host's server list ({"mcpServers": …}, VS Code's
// mcp.json, Codex's config.toml), as the binary's -p does.
//
// # What a running host offers
//
//   - [Host.Board]: every MCP client's last status report, as data ([StatusBoard]), and
//     [Options.OnStatus] for each report as it happens; [StatusLine] words one for people.
//   - [Host.ExposeAPI]: the host's remote methods ([MethodInfo], [MethodList],
//     [MethodProbe], [MethodRestart]), answered over a hosting host's remote API or in
//     process (remote.Local); [MethodClients] streams the profile's own clients.
//   - [Host.ServerList], [Host.Probe] and [Host.Restart]: the same answers as Go calls.
//   - [Host.Watch]: edits of the profile's files applied to the running tree.
//   - [Host.Agents]: the agent scopes, for the gateway's agent routes.
//
// # Concurrency
//
// A Host is safe for concurrent use once Mount has returned. Plugins load on their own
// goroutines; callbacks in [Options] (OnStatus) are called on the goroutines of the
// clients that report and must not block.
package host
