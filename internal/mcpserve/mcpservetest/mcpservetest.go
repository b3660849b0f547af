// Package mcpservetest holds what the tests of the harness's embedded servers share: the
// check that a server serves one session over a pair of streams ([EchoOverIO]). Only tests
// import it.
//
// # Concurrency
//
// EchoOverIO may be called from parallel tests; each call uses its own pipes and client.
package mcpservetest

import (
	"context"
	"io"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EchoOverIO checks a server served over a pair of pipes, as a stdio server is: serve runs
// on the server's ends until its context ends, a client on the other ends calls the
// server's echo tool with {"text": "io"} and must get "io" back, then it closes, the context
// ends, and serve must return nil.
func EchoOverIO(t testing.TB, serve func(cx context.Context, r io.Reader, w io.Writer) error) {
	t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	cx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- serve(cx, sr, sw) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(cx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(cx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "io"}})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "io" {
		t.Fatalf("echo: %v %v", res, err)
	}
	_ = cs.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
