// Package hostview renders what a host answers for people: tables of servers, tools,
// resources and prompts wrapped to the terminal's width, a probe's outcome, a prompt's
// messages, an agent session's transcript, resource contents, and JSON as scripts read it
// (<, > and & unescaped, empty protocol fields dropped for --json). The harness's commands
// print through it; an embedder prints the same way. Every text a server or a model wrote
// is shown safe (internal/termsafe) where it reaches a terminal.
//
// The functions are pure: they write to the writer they are given and keep no state, so
// they are safe for concurrent use.
package hostview
