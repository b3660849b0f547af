// Package faults is the harness's fault suite: tests, behind the build tag "faults", that run
// the MCP client, the MCP server manager and the harness binary against real server
// processes that misbehave — killed mid-call, silent, never initializing, writing garbage,
// exiting at once, crash-looping, answering with 10 MiB, storming tools/list_changed, an
// HTTP server restarted under its sessions, a host told to stop while twenty servers start,
// settings edits racing restarts and probes — and check that nothing is lost and nothing
// leaks: no goroutine (goleak), no file descriptor, no member of any server's process group.
//
// The fault servers are the test binary itself, re-executed with HARNESS_FAULTS_SERVER set to
// a mode; they are written with the go-sdk server API. With HARNESS_FAULTS_HARNESS=1 the test
// binary acts as the harness binary (cmd/harness/app.Main).
//
// Run it with:
//
//	go test -race -tags faults -timeout 10m ./tests/faults/
//
// docs/reliability.md lists each fault, what the harness does, and the test that proves it.
// The package has no code outside its tests.
package faults
