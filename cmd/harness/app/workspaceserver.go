package app

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/internal/mcpserve"
	"github.com/cordisgo/harness/internal/procpolicy"
	"github.com/cordisgo/harness/workspace"
)

// workspaceTokenEnv holds the workspace server's bearer token for --http.
const workspaceTokenEnv = "HARNESS_WORKSPACE_TOKEN"

func (a *invocation) workspaceServerCommand() *cobra.Command {
	var root, mode, addr, tokenFile string
	var network, noAuth bool
	var deny, writable []string
	modes := make([]string, len(workspace.Modes))
	for i, m := range workspace.Modes {
		modes[i] = string(m)
	}
	cmd := &cobra.Command{
		Use:   "workspace-server",
		Short: "Serve files and a sandboxed shell in a directory as an MCP server (stdio, or Streamable HTTP with --http)",
		Long: `Serve the workspace MCP server: read_file, list_dir, glob and grep in a directory (--root,
default the working directory); edit_file and write_file unless --mode read-only; and a bash
shell whose commands run under Linux's Landlock (--mode workspace-write: writes inside the root
only; read-only: no writes but a private TMPDIR; danger-full-access: no sandbox). Paths outside
the root, and credentials (~/.ssh, cloud logins, the harness's own files, --deny-read), are
refused. The built-in profiles mount it as the server "workspace" wherever an agent runs; see
docs/workspace.md.

With --http the server listens on the loopback and wants "Authorization: Bearer TOKEN", the
token read from --token-file or $` + workspaceTokenEnv + ` (--no-auth: none, loopback only).`,
		Example: `  harness workspace-server                         # stdio, in the working directory
  harness workspace-server --root ~/src/app --mode read-only
  harness workspace-server --http 127.0.0.1:8940 --token-file ~/.config/harness/workspace.token`,
		Args: noArgs,
		RunE: action(func(cmd *cobra.Command, _ []string) error {
			m, err := workspace.ParseMode(mode)
			if err != nil {
				return usageErrorf("--mode: %v", err)
			}
			token := ""
			if cmd.Flags().Changed("http") && !noAuth {
				if token, err = workspaceToken(tokenFile, a.env); err != nil {
					return usageErrorf("%v", err)
				}
			}
			srv, err := workspace.New(workspace.Options{Root: root, Mode: m, Network: network, DenyRead: deny, Writable: writable,
				Logger: a.logger})
			if err != nil {
				return failure(err)
			}
			defer func() { _ = srv.Close() }() // ends its jobs; nothing is left to report an error to
			if cmd.Flags().Changed("http") {
				ln, err := mcpserve.Listen(cmd.Context(), "workspace server", addr)
				if err != nil {
					return failure(err)
				}
				return srv.ServeHTTP(cmd.Context(), ln, workspace.HTTPOptions{Token: token, NoAuth: noAuth}, a.stderr)
			}
			if a.stdin == os.Stdin && a.stdout == os.Stdout {
				procpolicy.ForStdioServer() // blocking reads of stdin: the host's processor policy would slow it
				return srv.ServeStdio(cmd.Context())
			}
			return srv.ServeIO(cmd.Context(), a.stdin, a.stdout)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&root, "root", "", "the workspace's directory (default: the working directory)")
	f.StringVar(&mode, "mode", string(workspace.ModeWorkspaceWrite), "what may change: "+strings.Join(modes, ", "))
	f.BoolVar(&network, "network", false, "let shell commands use the network")
	f.StringArrayVar(&deny, "deny-read", nil, "a further `PATH` no tool and no command may read (repeatable; relative to the root)")
	f.StringArrayVar(&writable, "writable", nil, "a further `DIR` shell commands may write in (repeatable)")
	f.StringVar(&addr, "http", "", "serve Streamable HTTP at /mcp on `ADDR` (host:port; empty host: loopback); the URL is printed on stderr")
	f.StringVar(&tokenFile, "token-file", "", "with --http: read the bearer token from `PATH`")
	f.BoolVar(&noAuth, "no-auth", false, "with --http: no bearer token (refused unless the address is loopback)")
	return cmd
}

// workspaceToken reads the bearer token of workspace-server --http: --token-file's, else
// $HARNESS_WORKSPACE_TOKEN's.
func workspaceToken(file string, env []string) (string, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("--token-file: %w", err)
		}
		tok := strings.TrimSpace(string(b))
		if tok == "" {
			return "", fmt.Errorf("--token-file %s: empty", file)
		}
		return tok, nil
	}
	if v, ok := lookupEnv(env, workspaceTokenEnv); ok && v != "" {
		return v, nil
	}
	return "", fmt.Errorf("--http needs a bearer token: --token-file PATH or $%s (or --no-auth on the loopback)", workspaceTokenEnv)
}
