package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cordisgo/harness/host/mcpsettings"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpclient/serverdoc"
)

// Settings scopes of mcp add (and the others' --scope).
const (
	scopeUser    = mcpsettings.User
	scopeProject = mcpsettings.Project
)

// parseKeyValues parses a repeatable flag's KEY=VALUE values into a map, nil for none; want
// names the form in errors (KEY=VALUE, NAME=VALUE). A key given twice is refused with once,
// else the later wins.
func parseKeyValues(flag, want string, kvs []string, once bool) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usageErrorf("%s %q: expected %s", flag, kv, want)
		}
		if _, dup := out[k]; dup && once {
			return nil, usageErrorf("%s %s: given twice", flag, k)
		}
		out[k] = v
	}
	return out, nil
}

// settingsFiles returns the user and the project settings file the commands edit: those of
// the manager row of the profile the command line chose (-p …), or the defaults (the
// user's file and the project's .harness/mcp-servers.yaml).
func (a *invocation) settingsFiles() (mcpsettings.Files, error) {
	if a.flags.explicitProfile() {
		p, err := a.loadProfile()
		if err != nil {
			return mcpsettings.Files{}, err
		}
		if f, ok := mcpsettings.OfRows(p.Rows); ok {
			return f, nil
		}
	}
	dir, err := a.harnessDir()
	if err != nil {
		return mcpsettings.Files{}, err
	}
	wd, err := a.workDir()
	if err != nil {
		return mcpsettings.Files{}, fmt.Errorf("the current directory: %w", err)
	}
	return mcpsettings.Default(dir, wd), nil
}

func (a *invocation) mcpEditCommands() []*cobra.Command {
	var (
		scope     string // of remove, get, enable, disable
		addScope  string
		env       []string
		headers   []string
		url       string
		transport string
		asJSON    bool
	)
	checkScope := func(scope string, allowEmpty bool) error {
		if (scope == "" && allowEmpty) || scope == scopeUser || scope == scopeProject {
			return nil
		}
		return usageErrorf("--scope %q: expected user or project", scope)
	}
	add := &cobra.Command{
		Use:   "add NAME [flags] -- COMMAND [ARGS...] | add NAME --url URL",
		Short: "Add an MCP server to the settings file (a running host starts it at once)",
		Long: `Add an MCP server to the settings file that the MCP server manager reads (and a
running host reloads): a stdio server given by the command after --, or an HTTP
server with --url. The user's file is ` + "`$XDG_CONFIG_HOME/harness/mcp-servers.yaml`" + `; --scope project
writes .harness/mcp-servers.yaml in the current directory (or its nearest ancestor
that has one), which is layered on top of the user's. The file keeps its comments and
key order; the change is validated before it is written, and written atomically.`,
		Example: `  harness mcp add mem -- npx -y @modelcontextprotocol/server-memory
  harness mcp add gh --env GITHUB_TOKEN='${secret:gh}' -- github-mcp-server stdio
  harness mcp add docs --url https://example.com/mcp --header 'Authorization=Bearer ${DOCS_TOKEN}'`,
		Args: args(cobra.MinimumNArgs(1)),
		RunE: action(func(cmd *cobra.Command, argv []string) error {
			if err := checkScope(addScope, false); err != nil {
				return err
			}
			name, command := argv[0], argv[1:]
			if dash := cmd.ArgsLenAtDash(); dash > 1 {
				return usageErrorf("mcp add: one NAME before --, got %q", argv[:dash])
			}
			if !mcpclient.ValidServerName(name) {
				return usageErrorf("mcp add: server name %q must match ^[A-Za-z0-9_-]{1,32}$", name)
			}
			envs, err := parseKeyValues("--env", "KEY=VALUE", env, false)
			if err != nil {
				return err
			}
			hs, err := parseKeyValues("--header", "KEY=VALUE", headers, false)
			if err != nil {
				return err
			}
			cfg, err := mcpsettings.Entry(command, url, transport, envs, hs)
			if err != nil {
				return usageErrorf("%v", err)
			}
			files, err := a.settingsFiles()
			if err != nil {
				return err
			}
			msg, err := files.Add(name, addScope, cfg)
			if err != nil {
				return failure(err)
			}
			fmt.Fprintln(a.stdout, msg)
			return nil
		}),
	}
	af := add.Flags()
	af.StringArrayVar(&env, "env", nil, "an environment variable of the server, `KEY=VALUE` (VALUE may be ${VAR} or ${secret:NAME}); repeatable")
	af.StringArrayVar(&headers, "header", nil, "an HTTP header, `NAME=VALUE`; repeatable")
	af.StringVar(&url, "url", "", "the server's `URL` (an HTTP server)")
	af.StringVar(&transport, "transport", "http", "with --url: http or sse (both are written as streamable-http, which falls back to SSE by itself)")
	af.StringVar(&addScope, "scope", scopeUser, "which settings file: user or project")

	edit := func(use, short string, fn func(d *serverdoc.Editor, name, scope string) (string, error)) *cobra.Command {
		c := serverCommand(use, short, func(_ context.Context, name string) error {
			if err := checkScope(scope, true); err != nil {
				return err
			}
			files, err := a.settingsFiles()
			if err != nil {
				return err
			}
			d, sc, err := files.Find(name, scope)
			if err != nil {
				return failure(err)
			}
			msg, err := fn(d, name, sc)
			if err != nil {
				return failure(err)
			}
			if msg != "" {
				fmt.Fprintln(a.stdout, msg)
			}
			return nil
		})
		c.Flags().StringVar(&scope, "scope", "", "which settings file: user or project (default: the one that has NAME, the project's first)")
		return c
	}
	remove := edit("remove", "Remove an MCP server from the settings file", mcpsettings.Remove)
	enable := edit("enable", "Enable an MCP server in the settings file", func(d *serverdoc.Editor, name, sc string) (string, error) {
		return mcpsettings.SetEnabled(d, name, sc, true)
	})
	disable := edit("disable", "Disable an MCP server in the settings file (it stays listed, nothing runs)", func(d *serverdoc.Editor, name, sc string) (string, error) {
		return mcpsettings.SetEnabled(d, name, sc, false)
	})
	get := edit("get", "Show an MCP server's settings entry (values of env and headers redacted)", func(d *serverdoc.Editor, name, sc string) (string, error) {
		shown, err := mcpsettings.Show(d, name, sc)
		if err == nil && asJSON {
			return "", a.out().JSON(shown)
		}
		return shown.Text, err
	})
	get.Flags().BoolVar(&asJSON, "json", false, "print the entry as JSON")
	return []*cobra.Command{add, remove, get, enable, disable}
}
