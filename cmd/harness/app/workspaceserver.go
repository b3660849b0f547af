package app

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/workspace"
)

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
token read from --token-file or $` + workspace.TokenEnv + ` (--no-auth: none, loopback only).`,
		Example: `  harness workspace-server                         # stdio, in the working directory
  harness workspace-server --root ~/src/app --mode read-only
  harness workspace-server --http 127.0.0.1:8940 --token-file ~/.config/harness/workspace.token`,
		Args: noArgs,
		RunE: action(func(cmd *cobra.Command, _ []string) error {
			m, err := workspace.ParseMode(mode)
			if err != nil {
				return usageErrorf("--mode: %v", err)
			}
			s := workspace.ServeOptions{HTTP: cmd.Flags().Changed("http"), Addr: addr, Options: workspace.HTTPOptions{NoAuth: noAuth},
				Announce: a.stderr, In: a.stdin, Out: a.stdout}
			if s.HTTP && !noAuth {
				env, _ := lookupEnv(a.env, workspace.TokenEnv)
				if s.Options.Token, err = workspace.HTTPToken(tokenFile, env); err != nil {
					return usageErrorf("%v", err)
				}
			}
			return workspace.Serve(cmd.Context(), workspace.Options{Root: root, Mode: m, Network: network, DenyRead: deny, Writable: writable,
				Logger: a.logger}, s)
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
