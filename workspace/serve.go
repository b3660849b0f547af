package workspace

import (
	"context"
	"fmt"
	"io"

	"github.com/cordisgo/harness/internal/loopback"
	"github.com/cordisgo/harness/internal/mcpserve"
)

// TokenEnv is the environment variable that holds the bearer token of a workspace server
// served over HTTP (harness workspace-server --http) when no token file is given.
const TokenEnv = "HARNESS_WORKSPACE_TOKEN"

// HTTPToken is the bearer token of a workspace server over HTTP: the token file's (file set),
// else env's ($HARNESS_WORKSPACE_TOKEN's value). Neither is an error that says how to give
// one.
func HTTPToken(file, env string) (string, error) {
	if file != "" {
		tok, err := loopback.ReadToken(file)
		if err != nil {
			return "", fmt.Errorf("--token-file: %w", err)
		}
		return tok, nil
	}
	if env != "" {
		return env, nil
	}
	return "", fmt.Errorf("--http needs a bearer token: --token-file PATH or $%s (or --no-auth on the loopback)", TokenEnv)
}

// ServeOptions say where [Serve] serves a workspace. It is a plain value.
type ServeOptions struct {
	// HTTP serves Streamable HTTP at /mcp on Addr (an empty host: the loopback) with the
	// HTTPOptions, its URL announced on Announce; otherwise one session over In and Out.
	HTTP     bool
	Addr     string
	Options  HTTPOptions
	Announce io.Writer
	In       io.Reader
	Out      io.Writer
}

// Serve makes the workspace o describes and serves it as s says until cx is done or its one
// session ends; its shell's jobs end after.
func Serve(cx context.Context, o Options, s ServeOptions) error {
	srv, err := New(o)
	if err != nil {
		return err
	}
	defer func() { _ = srv.Close() }() // ends its jobs; nothing is left to report an error to
	if !s.HTTP {
		return srv.ServeIO(cx, s.In, s.Out)
	}
	ln, err := mcpserve.Listen(cx, "workspace server", s.Addr)
	if err != nil {
		return err
	}
	return srv.ServeHTTP(cx, ln, s.Options, s.Announce)
}
